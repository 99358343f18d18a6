package org.ipamoperators.testsupport;

import java.util.ArrayList;
import java.util.List;

/**
 * Shell wrappers that stop a helper process (etcd, kube-apiserver, moto) when the test JVM dies without running
 * its shutdown hooks, e.g. when a build is interrupted or a fork is killed on timeout.
 *
 * <p>The wrapper starts a watchdog in the background and then {@code exec}s the real program, which keeps the
 * wrapper's pid. Every two seconds the watchdog checks the JVM; once the JVM is gone it sends SIGTERM to the
 * program. It exits on its own when the program ends first.
 */
public final class OrphanGuard {

  private OrphanGuard() {
  }

  /** The watchdog and exec lines of a {@code /bin/sh} script guarding {@code program} for process {@code ownerPid}. */
  public static String scriptBody(long ownerPid, String program) {
    return "owner=" + ownerPid + "\n"
        + "self=$$\n"
        + "( while kill -0 \"$owner\" 2>/dev/null; do kill -0 \"$self\" 2>/dev/null || exit 0; sleep 2; done;"
        + " kill \"$self\" 2>/dev/null ) </dev/null >/dev/null 2>&1 &\n"
        + "exec " + quote(program) + " \"$@\"\n";
  }

  /** {@code command}, run through {@code /bin/sh} with a watchdog for this JVM. */
  public static List<String> guard(List<String> command) {
    List<String> guarded = new ArrayList<>(List.of("/bin/sh", "-c",
        scriptBody(ProcessHandle.current().pid(), command.get(0)), command.get(0)));
    guarded.addAll(command.subList(1, command.size()));
    return guarded;
  }

  /** Single-quotes a word for {@code /bin/sh}. */
  public static String quote(String word) {
    return "'" + word.replace("'", "'\\''") + "'";
  }
}
