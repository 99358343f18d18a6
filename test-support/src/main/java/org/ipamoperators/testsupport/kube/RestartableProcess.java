package org.ipamoperators.testsupport.kube;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.ipamoperators.testsupport.OrphanGuard;

/**
 * A {@code /bin/sh} wrapper that runs a program as its child and starts it again, with the same arguments, when
 * the test asked for a restart ({@link #requestRestart}) before stopping it; any other end of the program ends
 * the wrapper with the program's exit code. The child's pid is in {@code <dir>/<name>.pid}.
 *
 * <p>kube-api-test watches the wrapper, not the program, so a restart is invisible to it. The wrapper is stopped
 * the way kube-api-test stops its processes (SIGKILL): a watchdog then kills the child, as it does when the test
 * JVM is gone.
 */
final class RestartableProcess {

  private RestartableProcess() {}

  static String scriptBody(long ownerPid, Path dir, String name, String program) {
    String pidFile = OrphanGuard.quote(dir.resolve(name + ".pid").toString());
    String restartFile = OrphanGuard.quote(dir.resolve(name + ".restart").toString());
    return "owner=" + ownerPid + "\n"
        + "self=$$\n"
        + "( while kill -0 \"$owner\" 2>/dev/null && kill -0 \"$self\" 2>/dev/null; do sleep 0.5; done;"
        + " kill -9 \"$(cat " + pidFile + ")\" 2>/dev/null ) </dev/null >/dev/null 2>&1 &\n"
        + "trap 'kill -9 \"$child\" 2>/dev/null; exit 143' TERM INT\n"
        + "while :; do\n"
        + "  " + OrphanGuard.quote(program) + " \"$@\" &\n"
        + "  child=$!\n"
        + "  echo \"$child\" > " + pidFile + "\n"
        + "  wait \"$child\"\n"
        + "  rc=$?\n"
        + "  if [ -f " + restartFile + " ]; then rm -f " + restartFile + "; continue; fi\n"
        + "  exit \"$rc\"\n"
        + "done\n";
  }

  /** The pid of the program now running under the wrapper; -1 while the wrapper is rewriting the file. */
  static long pid(Path dir, String name) {
    try {
      String text = Files.readString(dir.resolve(name + ".pid")).trim();
      return text.isEmpty() ? -1 : Long.parseLong(text);
    } catch (IOException e) {
      throw new UncheckedIOException("No pid file for " + name, e);
    }
  }

  /** Marks the next end of the program as one the test asked for, so that the wrapper starts it again. */
  static void requestRestart(Path dir, String name) {
    try {
      Files.writeString(dir.resolve(name + ".restart"), "");
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot request a restart of " + name, e);
    }
  }
}
