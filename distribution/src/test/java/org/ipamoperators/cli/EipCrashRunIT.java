package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Address;
import software.amazon.awssdk.services.ec2.model.Filter;

/**
 * A crash run for Elastic IPs: a burst of Eips while the eip operator (its own process, against moto) is SIGKILLed
 * at seeded moments and started again. No public address may ever be shown by two Eips, no Eip's address may
 * change once shown, and at the end EC2 holds exactly one address per Eip; deleting the Eips releases every one.
 *
 * <p>A second address can exist for a while: an AllocateAddress sent by a killed process may reach EC2 after the
 * next process looked the Eip up by its UID tag and allocated one itself. Each reconcile of the Eip releases such
 * a duplicate (DuplicateAddressReleased), so the operator runs with a 10 s resync here and the count is checked
 * after it; the repairs are counted and printed. Addresses are counted by cluster and namespace tag, and the
 * operator watches only this namespace: the "26 addresses for 24 Eips" of two earlier full runs were the addresses
 * of Eips another test (EipBadSettingsIT) had left in the shared apiserver, served by this test's operator, which
 * then watched every namespace. Seed: {@code -Dipam.reliability.seed}, kills: {@code -Dipam.reliability.kills} (3),
 * runs in a row: {@code -Dipam.reliability.seeds} (1; 3 in the long run).
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/eips.materialize.cloud-v1.yml"})
@MotoTest
class EipCrashRunIT {
  private static final int KILLS = Integer.getInteger("ipam.reliability.kills", 3);
  private static final long SEED = Long.getLong("ipam.reliability.seed", System.nanoTime());
  private static final int SEEDS = Integer.getInteger("ipam.reliability.seeds", 1);
  private static final String CLUSTER = "crash-run";
  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void stop(KubernetesClient client) throws Exception {
    EipOperatorProcess.stopAll(processes, client);
  }

  @Test
  void eipsSurviveSeededKillsWithOneAddressEachAndNoLeak(KubeApiServer server, KubernetesClient client,
      MotoServer moto, Ec2Client ec2, @TempDir Path dir) throws Exception {
    // -Dipam.reliability.seeds=N: N runs in a row, seeds SEED, SEED+1, ..., each run's Eips named apart (the first
    // run's as always) and its operator logs in a directory of its own; every run ends with its Eips deleted.
    for (int k = 0; k < SEEDS; k++) {
      System.out.printf("[crash-run] eip run %d of %d%n", k + 1, SEEDS);
      try {
        runOnce(SEED + k, k == 0 ? "crash-" : "crash-s" + k + "-", server, client, moto, ec2,
            java.nio.file.Files.createDirectories(dir.resolve("seed-" + k)));
      } finally {
        for (Process p : processes) {
          p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        processes.clear();
      }
    }
  }

  private void runOnce(long seed, String prefix, KubeApiServer server, KubernetesClient client, MotoServer moto,
      Ec2Client ec2, Path dir) throws Exception {
    Random random = new Random(seed);
    int count = 24;
    System.out.printf("[crash-run] eip seed %d kills %d objects %d%n", seed, KILLS, count);
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    String ns = client.getNamespace();
    SnapshotCheck checks = new SnapshotCheck();
    AtomicBoolean watching = new AtomicBoolean(true);
    int[] snapshots = {0};
    Thread watcher = new Thread(() -> {
      while (watching.get()) {
        try {
          checks.check(shown(client));
          snapshots[0]++;
          Thread.sleep(100);
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException e) {
          // busy API server: next snapshot
        }
      }
    }, "eip-crash-watcher");
    watcher.start();

    Process op = start(dir, kubeconfig, ns, moto, "op-0");
    ExecutorService creators = Executors.newFixedThreadPool(4);
    for (int i = 0; i < count; i++) {
      int n = i;
      creators.submit(() -> {
        Eip e = new Eip();
        e.getMetadata().setName(prefix + n);
        e.setSpec(EipSpec.of(EipSelector.pod("crash-pod-" + n)));
        client.resource(e).create();
      });
    }
    creators.shutdown();
    for (int k = 1; k <= KILLS; k++) {
      Thread.sleep(300 + random.nextInt(2500));
      op.destroyForcibly(); // SIGKILL: an AllocateAddress may be in flight
      assertThat(op.waitFor(30, TimeUnit.SECONDS)).isTrue();
      op = start(dir, kubeconfig, ns, moto, "op-" + k);
    }
    assertThat(creators.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
    Process last = op;
    await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(500)).failFast(() -> !last.isAlive())
        .until(() -> shown(client).size() == count);
    watching.set(false);
    watcher.join(5_000);
    checks.check(shown(client));

    Map<String, List<String>> byEip = shown(client);
    Set<String> allocations = new HashSet<>();
    // ns: the addresses of this test's Eips (others' are other tests' business, see EipOperatorProcess).
    for (Eip e : client.resources(Eip.class).list().getItems()) {
      allocations.add(e.getStatus().allocationId());
    }
    // An address allocated by a killed process is adopted by its UID tag, or released as a duplicate at the next
    // reconcile (resync 10 s) when the next process had already allocated one.
    try {
      await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() ->
          assertThat(ours(ec2, ns)).extracting(Address::allocationId).containsExactlyInAnyOrderElementsOf(allocations));
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      describeExtras(client, ec2, ns, allocations);
      System.out.printf("[crash-run] eip last operator alive: %s; its log: %s%n", last.isAlive(),
          dir.resolve("op-" + KILLS + ".err"));
      throw e;
    }
    long repaired = client.v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> "DuplicateAddressReleased".equals(e.getReason()))
        .mapToLong(e -> e.getCount() == null ? 1 : e.getCount()).sum();
    String summary = String.format("seed %d, %d kills, %d snapshots, %d Eips, %d addresses, %d duplicates released",
        seed, KILLS, snapshots[0], count, ours(ec2, ns).size(), repaired);
    System.out.println("[crash-run] eip " + summary);
    assertThat(checks.duplicates()).as(summary).isEmpty();
    assertThat(checks.changed()).as(summary).isEmpty();
    assertThat(byEip).hasSize(count);

    client.resources(Eip.class).delete();
    await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1))
        .until(() -> client.resources(Eip.class).list().getItems().isEmpty());
    assertThat(ours(ec2, ns)).as("released with their Eips: %s", summary).isEmpty();
  }

  private Process start(Path dir, Path kubeconfig, String ns, MotoServer moto, String name) throws Exception {
    Process p = EipOperatorProcess.start(dir, kubeconfig, ns, moto.endpoint(), name, CLUSTER,
        Map.of("EIP_RESYNC_INTERVAL", "10s"));
    processes.add(p);
    return p;
  }

  /** Which Eip each address beyond one per Eip names in its tags, and what that Eip's status says. */
  private static void describeExtras(KubernetesClient client, Ec2Client ec2, String ns, Set<String> allocations) {
    Map<String, Eip> byUid = new HashMap<>();
    client.resources(Eip.class).list().getItems().forEach(e -> byUid.put(e.getMetadata().getUid(), e));
    for (Address a : ours(ec2, ns)) {
      if (allocations.contains(a.allocationId())) {
        continue;
      }
      Map<String, String> tags = new HashMap<>();
      a.tags().forEach(t -> tags.put(t.key(), t.value()));
      Eip owner = byUid.get(tags.get(EipNames.TAG_UID));
      System.out.printf("[crash-run] eip extra %s %s tags %s; its Eip %s status %s%n", a.allocationId(),
          a.publicIp(), tags, owner == null ? "(none with that uid)" : owner.getMetadata().getName(),
          owner == null ? "-" : owner.getStatus());
    }
  }

  private static List<Address> ours(Ec2Client ec2, String ns) {
    return ec2.describeAddresses(r -> r.filters(
        Filter.builder().name("tag:" + EipNames.TAG_CLUSTER).values(CLUSTER).build(),
        Filter.builder().name("tag:" + EipNames.TAG_NAMESPACE).values(ns).build())).addresses();
  }

  private static Map<String, List<String>> shown(KubernetesClient client) {
    Map<String, List<String>> out = new HashMap<>();
    for (Eip e : client.resources(Eip.class).list().getItems()) {
      if (e.getStatus() != null && e.getStatus().publicIpAddress() != null) {
        out.put(e.getMetadata().getName(), List.of(e.getStatus().publicIpAddress()));
      }
    }
    return out;
  }
}
