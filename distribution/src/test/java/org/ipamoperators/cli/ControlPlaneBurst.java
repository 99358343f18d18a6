package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * Creates a burst of objects while the control plane may be down: 4 threads, and a create that meets the outage
 * tries again for up to two minutes.
 */
final class ControlPlaneBurst {
  private ControlPlaneBurst() {}

  /** Objects {@code from} to {@code from + count - 1}, each made by {@code create}. */
  static void burst(int from, int count, IntConsumer create) throws InterruptedException {
    ExecutorService creators = Executors.newFixedThreadPool(4);
    for (int i = from; i < from + count; i++) {
      int n = i;
      creators.submit(() -> retry(() -> create.accept(n)));
    }
    creators.shutdown();
    assertThat(creators.awaitTermination(3, TimeUnit.MINUTES)).isTrue();
  }

  static void retry(Runnable create) {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (true) {
      try {
        create.run();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 409) {
          return; // an earlier try reached etcd before the outage cut its answer off
        }
        if (System.nanoTime() > deadline) {
          throw e;
        }
        try {
          Thread.sleep(500);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }
}
