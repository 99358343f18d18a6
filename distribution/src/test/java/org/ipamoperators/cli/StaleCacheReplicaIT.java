package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.testsupport.kube.ApiFaultProxy;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two vip replicas; the standby reaches the apiserver through a proxy that silences every watch, so its caches
 * hear nothing after their first list. The fresh leader serves a burst and is SIGKILLed; the stale replica leads
 * while Services are deleted, turned into ClusterIP Services and created, all unseen by it; then its watches come
 * back. At no moment may an address be shown by two Services, no Service's address may change, and in the end
 * every LoadBalancer Service is served and the audit finds nothing.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class StaleCacheReplicaIT {
  private static final String PREFIX = "198.18.19.";
  private final Replicas replicas = new Replicas();

  @AfterEach
  void stop() throws Exception {
    replicas.close();
  }

  @Test
  void aReplicaWithAStaleCacheLeadsWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    String ns = client.getNamespace();
    ReliabilityFixtures.ipGroup(client, "stale-vips", PREFIX + "0/24");
    Supplier<Map<String, List<String>>> shown = () -> Shown.loadBalancerIps(client, ns, "");
    SnapshotCheck checks = new SnapshotCheck();
    SnapshotWatcher watcher = null;
    try (ApiFaultProxy proxy = new ApiFaultProxy(server, 1L)) {
      proxy.silenceWatches(true);
      Process fresh = replicas.start(dir, OperatorRun.writeKubeconfig(dir, server.kubeconfig()), ns, "vip", "fresh",
          "fresh");
      Replicas.awaitLeader(client, "fresh");
      replicas.start(dir, OperatorRun.writeKubeconfig(dir, proxy.kubeconfig()), ns, "vip", "stale", "stale");
      watcher = SnapshotWatcher.start("stale-cache-watcher", checks, shown,
          Surfaces.vip(client, ns, ip -> ip.startsWith(PREFIX)), () -> {});
      for (int i = 0; i < 30; i++) {
        ReliabilityFixtures.loadBalancer(client, ns, "stale-" + i);
      }
      await().atMost(Duration.ofSeconds(120)).until(() -> shown.get().size() == 30);

      fresh.destroyForcibly(); // SIGKILL: the stale replica takes the Lease when it expires
      assertThat(fresh.waitFor(30, TimeUnit.SECONDS)).isTrue();
      Replicas.awaitLeader(client, "stale");
      for (int i = 0; i < 10; i++) {
        client.services().inNamespace(ns).withName("stale-" + i).delete();
      }
      for (int i = 10; i < 20; i++) {
        client.services().inNamespace(ns).withName("stale-" + i).edit(s -> new ServiceBuilder(s).editSpec()
            .withType("ClusterIP").endSpec().build());
      }
      for (int i = 30; i < 40; i++) {
        ReliabilityFixtures.loadBalancer(client, ns, "stale-" + i);
      }
      Thread.sleep(10_000); // the stale leader runs on what it last heard (its own writes, periodic passes)
      proxy.silenceWatches(false);

      Instant healed = Instant.now();
      await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(500))
          .until(() -> shown.get().size() == 20);
      Duration converged = Duration.between(healed, Instant.now());
      watcher.stop();
      checks.check(shown.get());
      List<Finding> findings = LedgerFindings.settled(client, Set.of("vip"), LedgerFindings.onResources(PREFIX),
          Duration.ofSeconds(60));
      String summary = "converged " + converged.toMillis() + " ms after the watches came back, "
          + watcher.taken() + " snapshots";
      System.out.println("[stale-cache] " + summary);
      assertThat(checks.duplicates()).as(summary).isEmpty();
      assertThat(checks.changed()).as(summary).isEmpty();
      assertThat(findings).as(summary).isEmpty();
    } finally {
      if (watcher != null) {
        watcher.stop();
      }
      ReliabilityCleanup.services(client, ns);
      client.resources(org.ipamoperators.vip.api.IPGroup.class).withName("stale-vips").delete();
    }
  }
}
