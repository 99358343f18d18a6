package org.ipamoperators.keepalived.reloader;

import java.util.List;

/**
 * Signals to keepalived with {@code kill} (Java can only send TERM and KILL): SIGHUP reloads the configuration,
 * SIGUSR1 makes it dump its state. In the pod the process namespace is shared, so keepalived's pid is visible.
 */
final class KeepalivedSignal {
  private static final java.time.Duration TIMEOUT = java.time.Duration.ofSeconds(10);

  private KeepalivedSignal() {}

  /** Sends {@code signal} (a name without {@code SIG}, e.g. {@code HUP}); throws with kill's output if it fails. */
  static void send(String signal, long pid) {
    List<String> command = List.of("kill", "-" + signal, Long.toString(pid));
    String output;
    int exit;
    try {
      Subprocess.Outcome o = Subprocess.run(command, TIMEOUT);
      if (o.timedOut()) {
        throw new IllegalStateException("kill -" + signal + " " + pid + " timed out");
      }
      output = o.output();
      exit = o.exit();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling keepalived (pid " + pid + ")", e);
    }
    if (exit != 0) {
      throw new IllegalStateException("cannot signal keepalived (pid " + pid + "): " + output.strip());
    }
  }
}
