package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.kube.WriteRefusal;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A Service's status write refused by the API server (an admission policy) while it moves to another address it
 * asked for: the address it shows stays its own in the ledger (the Service that asks for it next is not given it),
 * a Warning Event says why, and once writes are accepted again the move completes within seconds (retried with
 * back-off, not left to the periodic resync).
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class RefusedStatusWriteIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final Duration REFUSED_FOR = Duration.ofSeconds(20); // longer than java-operator-sdk's default retries (about 16 s)
  private Operator operator;
  private VipCluster cluster;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    cluster = new VipCluster(client);
    operator = VipCluster.startOperator(server);
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  @Test
  void aRefusedStatusWriteKeepsTheAddressAndIsRetriedUntilItGoesThrough() throws Exception {
    cluster.group("rs", "192.0.2.200/30", null);
    cluster.create(cluster.lb("s").editMetadata().addToAnnotations(VipAnnotations.IP_GROUP, "rs")
        .addToAnnotations(VipAnnotations.LOAD_BALANCER_IPS, "192.0.2.201").endMetadata());
    cluster.create(cluster.lb("probe").editSpec().withType("ClusterIP").withAllocateLoadBalancerNodePorts(null)
        .endSpec()); // not ours: its status is the probe of the refusal
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("s")).containsExactly("192.0.2.201"));
    String ns = cluster.client.getNamespace();
    List<String> seen = new ArrayList<>();
    try (WriteRefusal refusal = WriteRefusal.start(cluster.client, "refuse-" + ns + "-s", "", "services/status",
        List.of("s"), "probe", n -> cluster.client.services().withName("probe").subresource("status")
            .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"status\":{\"conditions\":[{\"type\":\"Probe\","
                + "\"status\":\"True\",\"reason\":\"Probe\",\"message\":\"" + n + "\","
                + "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}"))) {
      cluster.annotate("s", VipAnnotations.LOAD_BALANCER_IPS, "192.0.2.202");
      cluster.create(cluster.lb("t").editMetadata().addToAnnotations(VipAnnotations.IP_GROUP, "rs")
          .addToAnnotations(VipAnnotations.LOAD_BALANCER_IPS, "192.0.2.201").endMetadata());
      long until = System.nanoTime() + REFUSED_FOR.toNanos();
      while (System.nanoTime() < until) {
        assertThat(cluster.ingress("s")).as("s's status cannot change").containsExactly("192.0.2.201");
        IPClaim c = cluster.claim("192.0.2.201");
        assertThat(c).as("the address s shows stays claimed").isNotNull();
        assertThat(c.getSpec().owner().name()).as("by s").isEqualTo("s");
        assertThat(cluster.ingress("t")).as("t is not given what s shows").isEmpty();
        assertThat(refusal.effective()).isNotNull();
        Thread.sleep(300);
      }
      cluster.events("s").forEach(e -> seen.add(e.getReason() + ": " + e.getMessage()));
    }
    assertThat(seen).as("a Warning Event on s saying its status write was refused")
        .anySatisfy(m -> assertThat(m).startsWith("StatusWriteFailed").contains("192.0.2.202"));
    // Retried with back-off (at most 30 s apart), not left to the 5-minute resync.
    await().atMost(Duration.ofSeconds(40)).untilAsserted(() -> {
      assertThat(cluster.ingress("s")).containsExactly("192.0.2.202");
      assertThat(cluster.ingress("t")).containsExactly("192.0.2.201");
    });
    assertThat(cluster.claim("192.0.2.201").getSpec().owner().name()).isEqualTo("t");
  }
}
