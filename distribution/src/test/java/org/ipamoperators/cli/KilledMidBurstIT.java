package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.controller.common.ledger.BlockLedger;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator as its own process, SIGKILLed in the middle of a burst of namespaces (no shutdown
 * hook, reconciles cut anywhere between claim, annotation and network), then started again: every
 * namespace ends with its own address, the ledger agrees, and no address published before the kill
 * has changed.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE})
class KilledMidBurstIT {
  private static final int COUNT = 150;
  private final Replicas replicas = new Replicas();

  @AfterEach
  void stop() throws Exception {
    replicas.close();
  }

  private Process operator(Path dir, Path kubeconfig, String ns, String name) throws Exception {
    return replicas.start(dir, kubeconfig, ns, "egressip", null, name);
  }

  private static Map<String, String> assigned(KubernetesClient client) {
    Map<String, String> out = new HashMap<>();
    for (Namespace ns : client.namespaces().withLabel("burst", "killed").list().getItems()) {
      Map<String, String> a = ns.getMetadata().getAnnotations();
      if (a != null && a.get(EgressAnnotations.EGRESSIPS) != null) {
        out.put(ns.getMetadata().getName(), a.get(EgressAnnotations.EGRESSIPS));
      }
    }
    return out;
  }

  @Test
  void nothingPublishedChangesAcrossAKill(KubeApiServer server, KubernetesClient client, @TempDir Path dir)
      throws Exception {
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    ReliabilityFixtures.egressIpam(client, "killed", "192.0.2.0/24", "killed-w1", "zone");
    try {
      Process first = operator(dir, kubeconfig, client.getNamespace(), "first");
      ExecutorService pool = Executors.newFixedThreadPool(8);
      for (int i = 0; i < COUNT; i++) {
        int n = i;
        pool.submit(() -> ReliabilityFixtures.optedInNamespace(client, "killed-ns" + n, "killed", "killed"));
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
      await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
          .until(() -> assigned(client).size() >= 30);
      first.destroyForcibly(); // SIGKILL: no shutdown hook, whatever was in flight is cut
      assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
      Map<String, String> before = assigned(client);
      assertThat(before.size()).as("killed before the burst was done").isLessThan(COUNT);

      operator(dir, kubeconfig, client.getNamespace(), "second");
      await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofSeconds(1))
          .until(() -> assigned(client).size() == COUNT);
      Map<String, String> after = assigned(client);
      before.forEach((ns, ip) -> assertThat(after.get(ns)).as(ns).isEqualTo(ip));
      assertThat(new HashSet<>(after.values())).hasSize(COUNT);
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        // Both ledgers: IPClaims (none are made any more) and IPBlock entries.
        List<IPClaim> claims = new ClusterLedger(client).claimsOfPool("egressipam/killed");
        var entries = new BlockLedger(client).entriesOfPool("egressipam/killed");
        Map<String, String> owner = new HashMap<>();
        claims.forEach(c -> owner.put(c.getSpec().address(), c.getSpec().owner().name()));
        entries.forEach((ip, e) -> assertThat(owner.put(ip.toString(), e.owner().name())).as("%s in both", ip).isNull());
        after.forEach((ns, ip) -> assertThat(owner.get(ip)).as(ip).isEqualTo(ns));
        assertThat(owner).hasSize(COUNT); // no orphan claim left by the kill
      });
    } finally {
      client.resources(EgressIPAM.class).withName("killed").delete();
      ReliabilityFixtures.deleteEgressNode(client, "killed-w1");
      client.namespaces().withLabel("burst", "killed").delete();
    }
  }
}
