package org.ipamoperators.cli.demo;

import java.util.concurrent.CountDownLatch;

/**
 * Takes a demo's cluster down once: at once when the demo ends by itself ({@code --exit}, a failure), else on
 * Ctrl-C, from a shutdown hook registered when the cluster comes up.
 */
final class DemoTeardown {
  private final Thread hook;
  private final CountDownLatch done = new CountDownLatch(1);

  DemoTeardown(String name, Runnable close) {
    hook = new Thread(() -> {
      close.run();
      done.countDown();
    }, name);
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** Tears down in this thread; the shutdown hook no longer runs. */
  void now() {
    Runtime.getRuntime().removeShutdownHook(hook);
    hook.run();
  }

  /** Waits for the teardown that Ctrl-C starts. */
  void await() throws InterruptedException {
    done.await();
  }
}
