package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.FaultProxy;
import org.ipamoperators.testsupport.moto.FaultProxy.Fault;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.ec2.Ec2Client;

/**
 * Seeded cloud faults during a burst of Eips: the eip operator (its own process) reaches moto through a
 * {@link FaultProxy} that answers EC2 calls with RequestLimitExceeded, Unavailable (503) and InternalError (500) in
 * EC2's XML shape, answers slowly, resets connections before a call reaches EC2, and loses answers after EC2 did
 * the work (an AllocateAddress whose answer is lost and that the SDK repeats makes a second address). The faults
 * stop after a while; then every Eip must show exactly one address, the only one EC2 tags with its UID, associated
 * with its pod's IP when it has a pod, or with its node's InternalIP for a node-mode Eip (one per node); no address shown by two Eips, no private IP holding two addresses, no
 * address of a UID without an Eip; and deleting the Eips releases every address. At no snapshot may two Eips show
 * one address, nor an Eip's address change once shown.
 *
 * <p>Seed: {@code -Dipam.reliability.seed} (printed; the same seed draws the same fault sequence, though which
 * call draws which fault depends on the order the concurrent calls arrive in), runs in a row:
 * {@code -Dipam.reliability.seeds} (1; 3 in the long run), fault time: {@code -Dipam.reliability.faultSeconds} (20;
 * 40 in the long run). With the operator's release of a second address tagged with an Eip's UID switched off, it
 * fails: an AllocateAddress whose answer was lost and which the SDK repeated leaves two addresses for one Eip.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/eips.materialize.cloud-v1.yml"})
@MotoTest
class EipCloudFaultIT {
  private static final long SEED = Long.getLong("ipam.reliability.seed", System.nanoTime());
  private static final int SEEDS = Integer.getInteger("ipam.reliability.seeds", 1);
  private static final int FAULT_SECONDS = Integer.getInteger("ipam.reliability.faultSeconds",
      Boolean.getBoolean("ipam.reliability.long") ? 40 : 20);
  private static final String CLUSTER = "cloud-fault";
  /** Rates per call; at most one fault per call, drawn in this order. */
  static final Map<Fault, Double> RATES = new LinkedHashMap<>(Map.of(Fault.THROTTLE, 0.12,
      Fault.UNAVAILABLE, 0.06, Fault.INTERNAL, 0.06, Fault.SLOW, 0.10, Fault.RESET, 0.06,
      Fault.LOST_ANSWER, 0.10));
  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void stop(KubernetesClient client) throws Exception {
    EipOperatorProcess.stopAll(processes, client);
  }

  @Test
  void aBurstOfEipsConvergesAfterSeededCloudFaultsWithOneAddressEachAndNoLeak(KubeApiServer server,
      KubernetesClient client, MotoServer moto, Ec2Client ec2, @TempDir Path dir) throws Exception {
    EipFaultWorld world = new EipFaultWorld(client, ec2, CLUSTER, 61);
    try {
      for (int k = 0; k < SEEDS; k++) {
        System.out.printf("[cloud-fault] eip run %d of %d%n", k + 1, SEEDS);
        runOnce(SEED + k, "cf" + k, world, server, client, moto, Files.createDirectories(dir.resolve("seed-" + k)));
        for (Process p : processes) {
          p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        processes.clear();
      }
    } finally {
      world.deleteNodes();
    }
  }

  private void runOnce(long seed, String prefix, EipFaultWorld world, KubeApiServer server, KubernetesClient client,
      MotoServer moto, Path dir) throws Exception {
    Map<String, String> podIps = new HashMap<>();
    List<String> nodeLabels = new ArrayList<>();
    for (int n = 0; n < 3; n++) {
      podIps.putAll(world.nodeWithPods(prefix + "-n" + n, 4));
      nodeLabels.add(world.nodeLabel(prefix + "-n" + n));
    }
    List<String> podNames = new ArrayList<>(podIps.keySet());
    int withoutPod = 8;
    // Node-mode Eips: one per node, each selecting its node by label, associated with the node's InternalIP.
    int onNodes = nodeLabels.size();
    int count = podNames.size() + withoutPod + onNodes;
    System.out.printf("[cloud-fault] eip seed %d, %d Eips (%d with a pod, %d on a node), faults for %d s at %s%n",
        seed, count, podNames.size(), onNodes, FAULT_SECONDS, RATES);
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    String ns = client.getNamespace();
    try (FaultProxy proxy = new FaultProxy(moto.endpoint())) {
      proxy.chaos(seed, RATES);
      Process op = EipOperatorProcess.start(dir, kubeconfig, ns, proxy.endpoint(), "op", CLUSTER,
          Map.of("EIP_RESYNC_INTERVAL", "10s", "EIP_ORPHAN_SWEEP_INTERVAL", "15s"));
      processes.add(op);
      SnapshotCheck snapshots = new SnapshotCheck();
      SnapshotWatcher watcher = SnapshotWatcher.start("eip-cloud-fault-watcher", snapshots, () -> EipFaultWorld.shown(client));
      Instant faultsFrom = Instant.now();
      // Four waves over the first half of the fault time, so that the operator works all through the faults.
      ExecutorService creators = Executors.newFixedThreadPool(4);
      int waves = 4;
      for (int w = 0; w < waves; w++) {
        for (int i = w; i < count; i += waves) {
          EipSelector selector = i < podNames.size() ? EipSelector.pod(podNames.get(i))
              : i < podNames.size() + onNodes
                  ? EipSelector.node(Map.of(EipFaultWorld.NODE_LABEL, nodeLabels.get(i - podNames.size())))
                  : EipSelector.pod(prefix + "-nopod-" + i);
          String name = prefix + "-eip-" + i;
          creators.submit(() -> {
            Eip e = new Eip();
            e.getMetadata().setName(name);
            e.setSpec(EipSpec.of(selector));
            client.resource(e).create();
          });
        }
        Thread.sleep(FAULT_SECONDS * 1000L / 2 / waves);
      }
      creators.shutdown();
      assertThat(creators.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
      long left = FAULT_SECONDS * 1000L - Duration.between(faultsFrom, Instant.now()).toMillis();
      if (left > 0) {
        Thread.sleep(left);
      }
      proxy.calm();
      Instant calm = Instant.now();
      Map<Fault, Long> injected = proxy.counts();
      Map<String, Long> byCall = new java.util.TreeMap<>();
      proxy.injected().forEach(f -> byCall.merge(f, 1L, Long::sum));
      System.out.printf("[cloud-fault] eip seed %d faults by call: %s%n", seed, byCall);
      List<String> problems = new ArrayList<>();
      try {
        await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofSeconds(1)).failFast(() -> !op.isAlive())
            .until(() -> {
              problems.clear();
              problems.addAll(world.problems(podIps));
              return EipFaultWorld.shown(client).size() == count && problems.isEmpty();
            });
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        System.out.printf("[cloud-fault] eip seed %d did not converge; problems: %s; operator log %s%n", seed,
            problems, dir.resolve("op.err"));
        throw new AssertionError("seed " + seed + " did not converge within 180 s after the faults stopped: "
            + problems, e);
      }
      Duration converged = Duration.between(calm, Instant.now());
      watcher.stop();
      snapshots.check(EipFaultWorld.shown(client));
      long repaired = client.v1().events().inNamespace(ns).list().getItems().stream()
          .filter(e -> "DuplicateAddressReleased".equals(e.getReason()))
          .filter(e -> e.getInvolvedObject().getName().startsWith(prefix + "-"))
          .mapToLong(e -> e.getCount() == null ? 1 : e.getCount()).sum();
      String summary = String.format("seed %d, faults %s (%d in all), %d Eips, %d addresses, %d duplicates "
          + "released by the operator, converged %d ms after the faults stopped, %d snapshots", seed, injected,
          injected.values().stream().mapToLong(Long::longValue).sum(), count, world.addresses().size(), repaired,
          converged.toMillis(), watcher.taken());
      System.out.println("[cloud-fault] eip " + summary);
      assertThat(injected.values().stream().mapToLong(Long::longValue).sum()).as("faults injected").isPositive();
      // The node-mode Eips were checked against their nodes (world.problems), not skipped: each is associated.
      assertThat(client.resources(Eip.class).list().getItems().stream()
          .filter(e -> e.getMetadata().getName().startsWith(prefix + "-") && EipFaultWorld.nodeOf(e) != null)
          .filter(e -> e.getStatus() != null && e.getStatus().associationId() != null)).as(summary).hasSize(onNodes);
      assertThat(snapshots.duplicates()).as(summary).isEmpty();
      assertThat(snapshots.changed()).as(summary).isEmpty();

      Instant deleting = Instant.now();
      for (int i = 0; i < count; i++) {
        client.resources(Eip.class).withName(prefix + "-eip-" + i).delete();
      }
      await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1)).failFast(() -> !op.isAlive())
          .until(() -> client.resources(Eip.class).list().getItems().stream()
              .noneMatch(e -> e.getMetadata().getName().startsWith(prefix + "-")));
      assertThat(world.addresses()).as("released with their Eips: %s", summary).isEmpty();
      System.out.printf("[cloud-fault] eip seed %d: all %d addresses released %d ms after the delete%n", seed,
          count, Duration.between(deleting, Instant.now()).toMillis());
    }
  }

}
