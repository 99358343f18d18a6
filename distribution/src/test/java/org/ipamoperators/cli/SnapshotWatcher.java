package org.ipamoperators.cli;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Reads what the cluster shows about every 120 ms on a thread of its own and hands it to a {@link SnapshotCheck}
 * until stopped: the run's own view (owner to addresses) and, with {@link Surfaces}, every publication surface at
 * one etcd revision. A read that fails (the control plane is down) is skipped: the next snapshot comes when it is
 * back.
 */
final class SnapshotWatcher {
  /** From the start of one snapshot to the start of the next, when the reads take less. */
  private static final long PERIOD_MILLIS = 120;
  private final AtomicBoolean watching = new AtomicBoolean(true);
  private final AtomicInteger taken = new AtomicInteger();
  private final AtomicLong readNanos = new AtomicLong();
  private final Thread thread;

  private SnapshotWatcher(String name, SnapshotCheck checks, Supplier<Map<String, List<String>>> shown,
      Surfaces surfaces, Runnable afterEach) {
    thread = new Thread(() -> {
      while (watching.get()) {
        try {
          long start = System.nanoTime();
          checks.check(shown.get());
          if (surfaces != null) {
            checks.check(surfaces.read(), surfaces.readsLedger());
          }
          long took = System.nanoTime() - start;
          readNanos.addAndGet(took);
          taken.incrementAndGet();
          afterEach.run();
          Thread.sleep(Math.max(10, PERIOD_MILLIS - took / 1_000_000));
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException e) {
          // the control plane is down: the next snapshot comes when it is back
        }
      }
    }, name);
  }

  static SnapshotWatcher start(String name, SnapshotCheck checks, Supplier<Map<String, List<String>>> shown) {
    return start(name, checks, shown, () -> {});
  }

  /**
   * As above; after each snapshot {@code afterEach} runs on the same thread (e.g. a kubelet's part: start again a
   * replica that exited). A failure in it is skipped like a failed read.
   */
  static SnapshotWatcher start(String name, SnapshotCheck checks, Supplier<Map<String, List<String>>> shown,
      Runnable afterEach) {
    return start(name, checks, shown, null, afterEach);
  }

  /** As above, also reading every surface of {@code surfaces} (null: none) per snapshot; prints which. */
  static SnapshotWatcher start(String name, SnapshotCheck checks, Supplier<Map<String, List<String>>> shown,
      Surfaces surfaces, Runnable afterEach) {
    if (surfaces != null) {
      System.out.println(surfaces.describe(name));
    }
    SnapshotWatcher w = new SnapshotWatcher(name, checks, shown, surfaces, afterEach);
    w.thread.start();
    return w;
  }

  /** Stops after the snapshot in progress (waits at most 5 s). */
  void stop() throws InterruptedException {
    watching.set(false);
    thread.join(5_000);
  }

  /** Snapshots checked so far. */
  int taken() {
    return taken.get();
  }

  /** The mean time one snapshot's reads took, in ms (0 before the first). */
  long meanReadMillis() {
    int n = taken.get();
    return n == 0 ? 0 : readNanos.get() / n / 1_000_000;
  }
}
