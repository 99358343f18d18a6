package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.kube.ApiFaultProxy;
import org.ipamoperators.testsupport.kube.ApiFaultProxy.Fault;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The egressip and vip controllers in one operator whose every API call goes through a proxy that
 * throttles, fails, refuses writes with 409, slows down, resets connections and cuts watches, drawn
 * from a seed ({@code -Dipam.reliability.seed}), while a burst of namespaces and Services arrives.
 * Nothing may be shown on two owners at any moment; with the faults still on, everything is served;
 * the audit then finds nothing for the run's addresses. {@code -Dipam.reliability.seeds=N} (1 by default) runs it
 * N times in a row, seeds {@code s, s+1, ...}, each printed so that it replays; each run's objects are named apart
 * (a deleted namespace stays Terminating here) and the next starts when the ledger holds nothing of the one before.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml", "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE})
class ApiFaultIT {
  private static final int SEEDS = Integer.getInteger("ipam.reliability.seeds", 1);
  private static final long FIRST_SEED = Long.getLong("ipam.reliability.seed", System.nanoTime());
  private static final double RATE = Double.parseDouble(System.getProperty("ipam.reliability.faultRate", "0.05"));
  private static final String VIPS = "198.18.12.";
  private static final String EGRESS = "198.18.13.";

  @Test
  void servesEverythingThroughInjectedApiFaultsWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    ReliabilityFixtures.ipGroup(client, "fault-vips", VIPS + "0/24");
    ReliabilityFixtures.egressIpam(client, "fault", EGRESS + "0/24", "fault-w1", "fault-zone");
    try {
      for (int k = 0; k < SEEDS; k++) {
        System.out.printf("[api-faults] run %d of %d%n", k + 1, SEEDS);
        run(server, client, Files.createDirectories(dir.resolve("seed-" + k)), FIRST_SEED + k,
            k == 0 ? "fault-" : "fault-s" + k + "-");
      }
    } finally {
      client.resources(org.ipamoperators.vip.api.IPGroup.class).withName("fault-vips").delete();
      client.resources(EgressIPAM.class).withName("fault").delete();
      ReliabilityFixtures.deleteEgressNode(client, "fault-w1");
    }
  }

  private void run(KubeApiServer server, KubernetesClient client, Path dir, long seed, String prefix)
      throws Exception {
    String ns = client.getNamespace();
    String burst = prefix + "run";
    int services = 60;
    int namespaces = 40;
    System.out.printf("[api-faults] seed %d rate %.2f%n", seed, RATE);
    Predicate<Finding> ours = LedgerFindings.onResources(VIPS, EGRESS);
    try (ApiFaultProxy proxy = new ApiFaultProxy(server, seed)) {
      for (Fault f : List.of(Fault.THROTTLE, Fault.SERVER_ERROR, Fault.CONFLICT, Fault.SLOW, Fault.RESET)) {
        proxy.rate(f, RATE);
      }
      proxy.rate(Fault.WATCH_CUT, 0.5);
      Path kubeconfig = OperatorRun.writeKubeconfig(dir, proxy.kubeconfig());
      int port = LoopbackPorts.freePort();
      try (OperatorRun run = OperatorRun.start("operator", "--controllers", "egressip,vip", "--kubeconfig",
          kubeconfig.toString(), "--http-port", Integer.toString(port), "--bind-address", "127.0.0.1",
          "--namespace", ns, "--no-leader-election")) {
        try {
          // No wait for readiness: informers start through the faults (watch cuts make the event sources flap,
          // which /readyz reports), and the burst below arrives as they sync, a catch-up under faults.
          SnapshotCheck snapshots = new SnapshotCheck();
          SnapshotWatcher watcher = SnapshotWatcher.start("api-fault-watcher", snapshots,
              () -> shown(client, ns, burst),
              Surfaces.egressAndVip(client, ns, ip -> ip.startsWith(VIPS) || ip.startsWith(EGRESS)), () -> {});
          ExecutorService creators = Executors.newFixedThreadPool(4);
          for (int i = 0; i < services; i++) {
            int n = i;
            creators.submit(() -> ReliabilityFixtures.loadBalancer(client, ns, prefix + n));
          }
          for (int i = 0; i < namespaces; i++) {
            int n = i;
            creators.submit(() -> ReliabilityFixtures.optedInNamespace(client, prefix + "ns" + n, burst, "fault"));
          }
          creators.shutdown();
          assertThat(creators.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
          Instant start = Instant.now();
          // Served with the faults still on: retries and re-lists must get there by themselves.
          await().atMost(Duration.ofSeconds(300)).pollInterval(Duration.ofSeconds(1)).failFast(run::assertRunning)
              .until(() -> shown(client, ns, burst).size() == services + namespaces);
          Duration converged = Duration.between(start, Instant.now());
          watcher.stop();
          snapshots.check(shown(client, ns, burst));
          proxy.inject(false);
          List<Finding> findings = LedgerFindings.settled(client, Set.of("egressip", "vip"), ours,
              Duration.ofSeconds(60));
          String summary = String.format("seed %d, faults injected %s, requests forwarded %d, %d snapshots, "
              + "converged in %d ms", seed, proxy.injected(), proxy.forwarded(), watcher.taken(),
              converged.toMillis());
          System.out.println("[api-faults] " + summary);
          assertThat(snapshots.duplicates()).as(summary).isEmpty();
          assertThat(snapshots.changed()).as(summary).isEmpty();
          assertThat(findings).as(summary).isEmpty();
          assertThat(proxy.injected().values().stream().mapToLong(Long::longValue).sum())
              .as("faults were injected").isPositive();
        } finally {
          proxy.inject(false);
          ReliabilityCleanup.services(client, ns);
          ReliabilityCleanup.namespaces(client, "burst", burst);
          awaitReleased(client, ours);
        }
      }
    }
  }

  /**
   * With several seeds: waits (its operator still running) until the ledger holds nothing of the run's, so that the
   * next run starts clean; a run whose deletes left claims behind fails here.
   */
  private static void awaitReleased(KubernetesClient client, Predicate<Finding> ours) {
    if (SEEDS == 1) {
      return; // nothing runs after it that its leftovers could confuse
    }
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() ->
        assertThat(ClusterFacts.read(client, Set.of("egressip", "vip")).entries().stream()
            .filter(e -> e.resource().value().startsWith(VIPS) || e.resource().value().startsWith(EGRESS))
            .map(Object::toString).toList())
            .as("ledger entries left after the run's objects were deleted").isEmpty());
  }

  private static Map<String, List<String>> shown(KubernetesClient client, String ns, String burst) {
    Map<String, List<String>> out = new HashMap<>(Shown.loadBalancerIps(client, ns, "svc/"));
    out.putAll(Shown.egressIps(client, "burst", burst, "ns/"));
    return out;
  }
}
