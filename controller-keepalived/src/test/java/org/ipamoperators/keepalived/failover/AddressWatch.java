package org.ipamoperators.keepalived.failover;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Pattern;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.OrphanGuard;
import org.ipamoperators.testsupport.TestBinaries;
import org.ipamoperators.testsupport.netns.NetworkNamespace;

/**
 * {@code ip monitor address} in a namespace, each line stamped with {@link System#nanoTime()} as it arrives: tells
 * when an address appeared to within the pipe's latency (well under a millisecond), without polling. The watch is
 * known to be listening once it has seen a marker address added on {@code lo}.
 */
final class AddressWatch implements AutoCloseable {

  private static final String MARKER = "127.0.0.254/32";

  private final NetworkNamespace namespace;
  private final Process process;
  private final Thread reader;
  private final List<Line> lines = new ArrayList<>();

  private record Line(long nanos, String text) {
  }

  private AddressWatch(NetworkNamespace namespace, Process process) {
    this.namespace = namespace;
    this.process = process;
    this.reader = new Thread(this::read, "address-watch-" + namespace.name());
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts watching and returns once the watch sees events. */
  static AddressWatch start(NetworkNamespace namespace) {
    String ip = TestBinaries.fromEnvironment().ip().toString();
    Process process;
    try {
      process = new ProcessBuilder(OrphanGuard.guard(List.of(ip, "-n", namespace.name(), "monitor", "address")))
          .redirectErrorStream(true)
          .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
          .start();
    } catch (IOException e) {
      throw new IllegalStateException("Cannot run ip monitor in " + namespace, e);
    }
    AddressWatch watch = new AddressWatch(namespace, process);
    try {
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      long since = System.nanoTime();
      while (true) {
        namespace.ip("address", "replace", MARKER, "dev", "lo");
        if (watch.firstMatch(Pattern.compile("\\binet " + Pattern.quote(MARKER)), since, 200).isPresent()) {
          break;
        }
        namespace.ip("address", "del", MARKER, "dev", "lo");
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("ip monitor in " + namespace + " reports nothing");
        }
      }
      namespace.ip("address", "del", MARKER, "dev", "lo");
      return watch;
    } catch (RuntimeException e) {
      watch.close();
      throw e;
    }
  }

  /**
   * When {@code vip} was added after {@code sinceNanos}, waiting up to {@code timeout} for it; empty if it was not.
   */
  OptionalLong awaitAdded(Ip vip, long sinceNanos, Duration timeout) {
    Pattern added = Pattern.compile("^(?!Deleted).*\\binet6? " + Pattern.quote(vip.toString()) + "/");
    return firstMatch(added, sinceNanos, timeout.toMillis());
  }

  /** When {@code vip} was added after {@code sinceNanos}, if it was; does not wait. */
  OptionalLong addedAt(Ip vip, long sinceNanos) {
    return awaitAdded(vip, sinceNanos, Duration.ZERO);
  }

  private OptionalLong firstMatch(Pattern pattern, long sinceNanos, long timeoutMillis) {
    long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
    synchronized (lines) {
      int checked = 0;
      while (true) {
        for (; checked < lines.size(); checked++) {
          Line line = lines.get(checked);
          if (line.nanos() >= sinceNanos && pattern.matcher(line.text()).find()) {
            return OptionalLong.of(line.nanos());
          }
        }
        long left = (deadline - System.nanoTime()) / 1_000_000L;
        if (left <= 0 || !reader.isAlive()) {
          return OptionalLong.empty();
        }
        try {
          lines.wait(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return OptionalLong.empty();
        }
      }
    }
  }

  private void read() {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
        StandardCharsets.UTF_8))) {
      String text;
      while ((text = in.readLine()) != null) {
        long now = System.nanoTime();
        synchronized (lines) {
          lines.add(new Line(now, text));
          lines.notifyAll();
        }
      }
    } catch (IOException e) {
      // the monitor was stopped
    } finally {
      synchronized (lines) {
        lines.notifyAll();
      }
    }
  }

  @Override
  public void close() {
    process.destroyForcibly();
    try {
      process.waitFor();
      reader.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "address watch in " + namespace;
  }
}
