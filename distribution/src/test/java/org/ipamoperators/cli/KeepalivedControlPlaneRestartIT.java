package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
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
 * {@link ControlPlaneRestartIT} for keepalived: two KeepalivedGroups sharing one router-id space, Services of both
 * arriving in a burst, kube-apiserver stopped (SIGTERM) and started again and etcd SIGKILLed and started again on its
 * data at points of the burst drawn from a printed seed ({@code -Dipam.reliability.seed}), in a seeded order. The
 * operator runs on throughout. Each VIP's router id is the resource:
 * never on two VIPs at any snapshot, never changed once shown; in the end every VIP has one and the audit (router
 * ids and the groups' metrics ports) finds nothing.
 */
class KeepalivedControlPlaneRestartIT {
  private static final long SEED = Long.getLong("ipam.reliability.seed", System.nanoTime());
  /** Runs, each on a fresh apiserver and etcd of its own, seeds {@code SEED, SEED + 1, ...}. */
  private static final int SEEDS = Integer.getInteger("ipam.reliability.seeds", 1);

  @Test
  void routerIdsSurviveAnApiserverRestartAndAnEtcdKillMidBurst(@TempDir Path dir) throws Exception {
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
          "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
          "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml");
      String ns = "restart-ka";
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      List<String> groups = List.of("restart-ka", "restart-kb");
      ReliabilityFixtures.keepalivedGroups(client, ns, "restart-k1", "restart-keepalived", groups);

      Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
      int port = LoopbackPorts.freePort();
      int total = 60;
      try (OperatorRun run = OperatorRun.start("operator", "--controllers", "keepalived", "--kubeconfig",
          kubeconfig.toString(), "--http-port", Integer.toString(port), "--bind-address", "127.0.0.1",
          "--namespace", ns, "--no-leader-election")) {
        run.awaitReady(port, "ok\n");
        SnapshotCheck snapshots = new SnapshotCheck();
        SnapshotWatcher watcher = SnapshotWatcher.start("keepalived-restart-watcher", snapshots,
            () -> shown(client, ns, groups), Surfaces.keepalived(client, ns, ip -> ip.startsWith("198.18.21.")),
            () -> {});

        java.util.function.IntConsumer create = i -> ReliabilityFixtures.keepalivedService(client, ns,
            "restart-k" + i, groups.get(i % 2), "198.18.21." + (i + 1));
        ControlPlaneBurst.Outages down = ControlPlaneBurst.seededOutages(server, seed, total, create, "keepalived");

        Instant start = Instant.now();
        int expected = total;
        await().atMost(Duration.ofSeconds(240)).pollInterval(Duration.ofSeconds(1)).failFast(run::assertRunning)
            .until(() -> shown(client, ns, groups).size() == expected);
        Duration converged = Duration.between(start, Instant.now());
        watcher.stop();
        snapshots.check(shown(client, ns, groups));

        List<Finding> findings = LedgerFindings.settled(client, Set.of("keepalived"), f -> true,
            Duration.ofSeconds(60));
        String summary = String.format("%s, apiserver down %d ms, etcd down %d ms, %d snapshots, %d router "
            + "ids, converged %d ms after the last create", down.where(), down.apiserverDown().toMillis(),
            down.etcdDown().toMillis(), watcher.taken(),
            expected, converged.toMillis());
        System.out.println("[control-plane-restart] keepalived " + summary);
        assertThat(snapshots.duplicates()).as(summary).isEmpty();
        assertThat(snapshots.changed()).as(summary).isEmpty();
        assertThat(findings).as(summary).isEmpty();
        run.assertRunning();
      }
    } finally {
      server.stop();
    }
  }

  /** VIP (group/instance key) to its router id, as the groups' status shows them. */
  private static Map<String, List<String>> shown(KubernetesClient client, String ns, List<String> groups) {
    return Shown.routerIds(client, ns, groups);
  }
}
