package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.crds.CrdInstaller;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control plane itself goes down mid-burst: kube-apiserver is stopped (SIGTERM, its graceful shutdown) and
 * started again while namespaces and Services arrive, and etcd is SIGKILLed and started again on its data; the order
 * and the points of the burst where each happens are drawn from a printed seed ({@code -Dipam.reliability.seed}).
 * The egressip and vip controllers run in one operator process against an apiserver of this test's own
 * ({@link KubeApiServer#startPrivate()}). Nothing may be shown on two owners at any moment, no owner's address
 * may change, everything is served in the end without restarting the operator, and the audit finds nothing.
 */
class ControlPlaneRestartIT {
  private static final long SEED = Long.getLong("ipam.reliability.seed", System.nanoTime());
  /** Runs, each on a fresh apiserver and etcd of its own, seeds {@code SEED, SEED + 1, ...}. */
  private static final int SEEDS = Integer.getInteger("ipam.reliability.seeds", 1);

  @Test
  void survivesAnApiserverRestartAndAnEtcdKillMidBurst(@TempDir Path dir) throws Exception {
    for (int k = 0; k < SEEDS; k++) {
      System.out.printf("[control-plane-restart] run %d of %d%n", k + 1, SEEDS);
      once(java.nio.file.Files.createDirectories(dir.resolve("seed-" + k)), SEED + k);
    }
  }

  private void once(Path dir, long seed) throws Exception {
    KubeApiServer server = KubeApiServer.startPrivate();
    try (KubernetesClient client = server.newClient()) {
      CrdInstaller.install(client, "META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
          "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
          "META-INF/fabric8/ipgroups.paas.org-v1.yml", "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml");
      String ns = "restart-vips";
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      ReliabilityFixtures.ipGroup(client, "restart-vips", "198.18.15.0/24");
      ReliabilityFixtures.egressIpam(client, "restart", "198.18.16.0/24", "restart-w1", "restart-zone");

      Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
      int port = LoopbackPorts.freePort();
      int total = 180; // 90 Services and 90 opted-in namespaces, interleaved
      try (OperatorRun run = OperatorRun.start("operator", "--controllers", "egressip,vip", "--kubeconfig",
          kubeconfig.toString(), "--http-port", Integer.toString(port), "--bind-address", "127.0.0.1",
          "--namespace", ns, "--no-leader-election")) {
        run.awaitReady(port, "ok\n");
        SnapshotCheck snapshots = new SnapshotCheck();
        SnapshotWatcher watcher = SnapshotWatcher.start("restart-watcher", snapshots, () -> shown(client, ns),
            Surfaces.egressAndVip(client, ns, ip -> ip.startsWith("198.18.15.") || ip.startsWith("198.18.16.")),
            () -> {});

        ControlPlaneBurst.Outages down = ControlPlaneBurst.seededOutages(server, seed, total, i -> create(client, ns, i), "egressip,vip");

        Instant start = Instant.now();
        int expected = total;
        await().atMost(Duration.ofSeconds(240)).pollInterval(Duration.ofSeconds(1)).failFast(run::assertRunning)
            .until(() -> shown(client, ns).size() == expected);
        Duration converged = Duration.between(start, Instant.now());
        watcher.stop();
        snapshots.check(shown(client, ns));

        List<Finding> findings = LedgerFindings.settled(client, Set.of("egressip", "vip"), f -> true,
            Duration.ofSeconds(60));
        String summary = String.format("%s, apiserver down %d ms, etcd down %d ms, %d snapshots, converged "
            + "%d ms after the last create", down.where(), down.apiserverDown().toMillis(),
            down.etcdDown().toMillis(), watcher.taken(),
            converged.toMillis());
        System.out.println("[control-plane-restart] " + summary);
        assertThat(snapshots.duplicates()).as(summary).isEmpty();
        assertThat(snapshots.changed()).as(summary).isEmpty();
        assertThat(findings).as(summary).isEmpty();
        run.assertRunning();
      }
    } finally {
      server.stop();
    }
  }

  /** Object {@code i} of the burst: Service {@code i / 2} when even, opted-in namespace {@code i / 2} when odd. */
  private static void create(KubernetesClient client, String ns, int i) {
    if (i % 2 == 0) {
      ReliabilityFixtures.loadBalancer(client, ns, "restart-" + i / 2);
    } else {
      ReliabilityFixtures.optedInNamespace(client, "restart-ns" + i / 2, "restart", "restart");
    }
  }

  private static Map<String, List<String>> shown(KubernetesClient client, String ns) {
    Map<String, List<String>> out = new HashMap<>(Shown.loadBalancerIps(client, ns, "svc/"));
    out.putAll(Shown.egressIps(client, "burst", "restart", "ns/"));
    return out;
  }
}
