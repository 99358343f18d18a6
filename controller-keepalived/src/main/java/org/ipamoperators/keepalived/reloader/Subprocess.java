package org.ipamoperators.keepalived.reloader;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a short command with a real time limit. The output is drained on a thread of its own while the caller waits
 * for the exit with a timeout: reading to the end first would block until the process closes its output, so a hung
 * {@code keepalived --config-test}, {@code ip route get} or {@code kill} would freeze the reloader loop (and the
 * metrics) forever. A process past its time is killed and reported as timed out.
 */
final class Subprocess {
  private static final Duration DRAIN_AFTER_EXIT = Duration.ofSeconds(1);

  /** The exit code (-1 when it could not run or timed out), the combined output, and whether it timed out. */
  record Outcome(int exit, String output, boolean timedOut) {}

  private Subprocess() {}

  static Outcome run(List<String> command, Duration timeout) throws InterruptedException {
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
    } catch (IOException e) {
      return new Outcome(-1, "cannot run " + command + ": " + e.getMessage(), false);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Thread drain = new Thread(() -> copy(p.getInputStream(), out), "subprocess-output");
    drain.setDaemon(true);
    drain.start();
    boolean exited;
    try {
      exited = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      p.destroyForcibly();
      throw e;
    }
    if (!exited) {
      p.destroyForcibly();
      p.waitFor(DRAIN_AFTER_EXIT.toMillis(), TimeUnit.MILLISECONDS);
    }
    // A child it left behind may keep the output open: never wait for that longer than a moment.
    drain.join(DRAIN_AFTER_EXIT.toMillis());
    String text;
    synchronized (out) {
      text = out.toString(StandardCharsets.UTF_8);
    }
    return exited ? new Outcome(p.exitValue(), text, false)
        : new Outcome(-1, text + (text.isEmpty() || text.endsWith("\n") ? "" : "\n") + "(timed out after "
            + timeout.toMillis() + " ms)", true);
  }

  private static void copy(InputStream in, ByteArrayOutputStream out) {
    byte[] buf = new byte[8192];
    try (in) {
      for (int n; (n = in.read(buf)) >= 0; ) {
        synchronized (out) {
          out.write(buf, 0, n);
        }
      }
    } catch (IOException e) {
      // the process is gone or was killed: what was read so far is the output
    }
  }
}
