package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import org.ipamoperators.testsupport.kube.KubeApiServer;

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

  /**
   * {@code n} seeded points of a burst of {@code count}: sorted, distinct, between a tenth and nine tenths of the
   * way, at least {@code count / (4 n)} apart so that each outage meets the burst in a new state.
   */
  static int[] points(Random random, int count, int n) {
    int from = count / 10;
    int span = count * 8 / 10;
    int gap = Math.max(1, count / (4 * n));
    int[] at = new int[n];
    for (int k = 0; k < n; k++) {
      int low = k == 0 ? from : at[k - 1] + gap;
      int high = from + span - (n - 1 - k) * gap;
      at[k] = low + random.nextInt(Math.max(1, high - low));
    }
    return at;
  }

  /**
   * Objects 0 to {@code count - 1} as {@link #burst}, while outage k runs (on the caller's thread, the burst going
   * on) once {@code at[k]} objects have been created; waits for each point at most two minutes. Returns how long
   * each outage took.
   */
  static List<Duration> burstWithOutages(int count, IntConsumer create, int[] at, List<Callable<Duration>> outages)
      throws Exception {
    assertThat(at).hasSameSizeAs(outages.toArray());
    AtomicInteger created = new AtomicInteger();
    ExecutorService creators = Executors.newFixedThreadPool(4);
    for (int i = 0; i < count; i++) {
      int n = i;
      creators.submit(() -> {
        retry(() -> create.accept(n));
        created.incrementAndGet();
      });
    }
    creators.shutdown();
    List<Duration> took = new ArrayList<>();
    for (int k = 0; k < at.length; k++) {
      long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
      while (created.get() < at[k] && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(created.get()).as("objects created before outage %d", k + 1).isGreaterThanOrEqualTo(at[k]);
      took.add(outages.get(k).call());
    }
    assertThat(creators.awaitTermination(3, TimeUnit.MINUTES)).isTrue();
    return took;
  }

  /** What {@link #seededOutages} did: how long each part of the control plane was down, and at which points. */
  record Outages(Duration apiserverDown, Duration etcdDown, String where) {}

  /**
   * Objects 0 to {@code count - 1} as {@link #burst}, while kube-apiserver is restarted and etcd is SIGKILLed and
   * started again, in an order and at points of the burst drawn from {@code seed} (printed, so that it replays).
   */
  static Outages seededOutages(KubeApiServer server, long seed, int count, IntConsumer create, String label)
      throws Exception {
    Random random = new Random(seed);
    boolean etcdFirst = random.nextBoolean();
    int[] at = points(random, count, 2);
    String where = String.format("seed %d: %s after %d creates, %s after %d", seed,
        etcdFirst ? "etcd kill" : "apiserver restart", at[0], etcdFirst ? "apiserver restart" : "etcd kill", at[1]);
    System.out.println("[control-plane-restart] " + label + " " + where);
    Callable<Duration> apiserver = server::restartApiServer;
    Callable<Duration> etcd = server::killEtcd;
    List<Duration> down = burstWithOutages(count, create, at,
        etcdFirst ? List.of(etcd, apiserver) : List.of(apiserver, etcd));
    return new Outages(down.get(etcdFirst ? 1 : 0), down.get(etcdFirst ? 0 : 1), where);
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
