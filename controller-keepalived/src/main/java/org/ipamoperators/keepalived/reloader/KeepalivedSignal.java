package org.ipamoperators.keepalived.reloader;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Signals to keepalived with {@code kill} (Java can only send TERM and KILL): SIGHUP reloads the configuration,
 * SIGUSR1 makes it dump its state. In the pod the process namespace is shared, so keepalived's pid is visible.
 */
final class KeepalivedSignal {
  private KeepalivedSignal() {}

  /** Sends {@code signal} (a name without {@code SIG}, e.g. {@code HUP}); throws with kill's output if it fails. */
  static void send(String signal, long pid) {
    List<String> command = List.of("kill", "-" + signal, Long.toString(pid));
    String output;
    int exit;
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
      output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("kill -" + signal + " " + pid + " timed out");
      }
      exit = p.exitValue();
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + command + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling keepalived (pid " + pid + ")", e);
    }
    if (exit != 0) {
      throw new IllegalStateException("cannot signal keepalived (pid " + pid + "): " + output.strip());
    }
  }
}
