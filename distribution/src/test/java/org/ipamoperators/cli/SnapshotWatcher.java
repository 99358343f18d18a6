package org.ipamoperators.cli;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Reads what the cluster shows every 150 ms on a thread of its own and hands it to a {@link SnapshotCheck} until
 * stopped. A read that fails (the control plane is down) is skipped: the next snapshot comes when it is back.
 */
final class SnapshotWatcher {
  private final AtomicBoolean watching = new AtomicBoolean(true);
  private final AtomicInteger taken = new AtomicInteger();
  private final Thread thread;

  private SnapshotWatcher(String name, SnapshotCheck checks, Supplier<Map<String, List<String>>> shown,
      Runnable afterEach) {
    thread = new Thread(() -> {
      while (watching.get()) {
        try {
          checks.check(shown.get());
          taken.incrementAndGet();
          afterEach.run();
          Thread.sleep(150);
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
    SnapshotWatcher w = new SnapshotWatcher(name, checks, shown, afterEach);
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
}
