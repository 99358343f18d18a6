package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.List;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * A Service that stops holding its address (deleted, or no longer a LoadBalancer) must stop showing
 * it, or be gone from the API, before its claim is deleted: otherwise, between the two, the address
 * is free in the ledger while the Service still announces it, and another Service (or a second
 * replica) takes it. The history of both kinds is replayed in the API server's own order (see
 * {@link LedgerTimeline}), so the check does not depend on timing. Before the fix, a deleted Service
 * had its claim released while its finalizer still kept it, address shown, in the API.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class DeletedServiceUnpublishedFirstIT {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Test
  void aReleasedAddressIsNeverShownWithoutItsClaim(KubeApiServer server, KubernetesClient client) throws Exception {
    VipCluster cluster = new VipCluster(client);
    Operator operator = VipCluster.startOperator(server);
    try (LedgerTimeline timeline = new LedgerTimeline(client)) {
      cluster.group("p1", "192.0.2.0/29", List.of());
      cluster.create(cluster.lb("a"));
      cluster.create(cluster.lb("c"));
      await().atMost(WAIT).until(() -> !cluster.ingress("a").isEmpty() && !cluster.ingress("c").isEmpty());
      String x = cluster.ingress("a").get(0);
      String y = cluster.ingress("c").get(0);

      cluster.delete("a");
      await().atMost(WAIT).until(() -> cluster.service("a") == null && cluster.claim(x) == null);
      // The address is free: the next Service may get it, and only now.
      cluster.create(cluster.lb("b"));
      await().atMost(WAIT).until(() -> !cluster.ingress("b").isEmpty());

      client.services().withName("c").edit(s -> {
        s.getSpec().setType("ClusterIP");
        s.getSpec().setAllocateLoadBalancerNodePorts(null);
        return s;
      });
      await().atMost(WAIT).until(() -> cluster.claim(y) == null && cluster.ingress("c").isEmpty());

      await().pollDelay(Duration.ofSeconds(1)).atMost(WAIT).until(() -> {
        int n = timeline.size();
        Thread.sleep(500);
        return timeline.size() == n;
      });
      assertThat(timeline.sawDeleted("Service", "a")).as("the watch saw a's deletion").isTrue();
      assertThat(timeline.sawDeleted("IPClaim", org.ipamoperators.controller.common.ledger.ClaimNames.of(
          org.ipamoperators.core.address.Ip.parse(x)))).as("the watch saw the release of %s", x).isTrue();
      assertThat(timeline.violations()).as("moments a Service showed an address it no longer held").isEmpty();
    } finally {
      operator.stop();
      cluster.close();
    }
  }
}
