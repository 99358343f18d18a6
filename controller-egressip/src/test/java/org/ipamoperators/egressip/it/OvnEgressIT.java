package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * OVN-Kubernetes (reference scenario 49): no HostSubnet API, so the controller finds OVN's EgressIP
 * API and writes one EgressIP per namespace plus the egress-assignable node label.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"}, thirdPartyCrds = ThirdPartyCrd.EGRESS_IP)
class OvnEgressIT {
  private static final ResourceDefinitionContext EGRESS_IP = new ResourceDefinitionContext.Builder()
      .withGroup("k8s.ovn.org").withVersion("v1").withKind("EgressIP").withPlural("egressips").withNamespaced(false).build();
  private Operator operator;
  private EgressCluster cluster;
  private KubernetesClient client;

  @BeforeAll
  static void noSdnHere(KubeApiServer server) {
    // Another test class of this JVM may have installed OpenShift SDN's CRDs: this cluster is OVN.
    try (KubernetesClient c = server.newClient()) {
      for (String crd : List.of("hostsubnets.network.openshift.io", "netnamespaces.network.openshift.io")) {
        c.apiextensions().v1().customResourceDefinitions().withName(crd).delete();
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> c.getApiGroups().getGroups().stream()
          .noneMatch(g -> g.getName().equals("network.openshift.io")));
    }
  }

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client, TestInfo info) {
    this.client = client;
    cluster = new EgressCluster(client, "ovn" + Integer.toHexString(info.getDisplayName().hashCode() & 0xfff), false);
    operator = SdnEgressIT.startOperator(server);
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  private GenericKubernetesResource egressIp(String ns) {
    return client.genericKubernetesResources(EGRESS_IP).withName("egressipam-" + cluster.n(ns)).get();
  }

  private boolean assignable(String node) {
    Node n = client.nodes().withName(cluster.n(node)).get();
    return n.getMetadata().getLabels().containsKey(EgressAnnotations.OVN_EGRESS_ASSIGNABLE);
  }

  @Test
  @SuppressWarnings("unchecked")
  void eachNamespaceGetsAnEgressIpObjectAndSelectedNodesAreAssignable() {
    String ipam = cluster.n("ovn");
    cluster.node("a1", Map.of("zone", "a", "egress", "yes"));
    cluster.node("b1", Map.of("zone", "b", "egress", "yes"));
    cluster.node("x1", Map.of("zone", "a")); // not selected
    cluster.ipam(ipam, "zone", Map.of("egress", "yes"), null, null, cidr("192.0.2.0/24", "a"),
        cidr("2001:db8:ee::/64", "b"));
    cluster.namespace("web", ipam, null);
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      GenericKubernetesResource e = egressIp("web");
      assertThat(e).isNotNull();
      Map<String, Object> spec = (Map<String, Object>) e.getAdditionalProperties().get("spec");
      assertThat((List<String>) spec.get("egressIPs")).containsExactly("192.0.2.1", "2001:db8:ee::1"); // not ::, the Subnet-Router anycast address
      assertThat(spec.get("namespaceSelector")).isEqualTo(
          Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", cluster.n("web"))));
      assertThat(e.getMetadata().getLabels()).containsEntry(EgressAnnotations.MANAGED_BY, ipam);
      assertThat(assignable("a1")).isTrue();
      assertThat(assignable("b1")).isTrue();
      assertThat(assignable("x1")).isFalse();
      EgressIPAM x = client.resources(EgressIPAM.class).withName(ipam).get();
      assertThat(x.getStatus()).isNotNull();
      assertThat(x.getStatus().networkType()).isEqualTo("OVNKubernetes");
    });
    assertThat(cluster.egressIps("web")).isEqualTo("192.0.2.1,2001:db8:ee::1");

    // leaving the selector removes our label; opting out removes the EgressIP
    cluster.label("b1", "egress", null);
    cluster.annotate("web", EgressAnnotations.EGRESSIPAM, null);
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      assertThat(assignable("b1")).isFalse();
      assertThat(egressIp("web")).isNull();
      assertThat(cluster.egressIps("web")).isNull();
    });
  }

  @Test
  void anEgressIpWeDidNotCreateIsNeverOverwritten() {
    String ipam = cluster.n("foreign");
    cluster.node("a1", Map.of("zone", "a"));
    client.genericKubernetesResources(EGRESS_IP).resource(new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
        .withApiVersion("k8s.ovn.org/v1").withKind("EgressIP").withNewMetadata()
        .withName("egressipam-" + cluster.n("ns1")).endMetadata()
        .addToAdditionalProperties("spec", Map.of("egressIPs", List.of("198.51.100.200"),
            "namespaceSelector", Map.of("matchLabels", Map.of("team", "x"))))
        .build()).create();
    cluster.ipam(ipam, "zone", null, null, null, cidr("192.0.2.0/24", "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      EgressIPAM x = client.resources(EgressIPAM.class).withName(ipam).get();
      assertThat(x.getStatus()).isNotNull();
      assertThat(x.getStatus().conditions()).anySatisfy(c -> assertThat(c.getMessage()).contains("is not managed by EgressIPAM"));
    });
    @SuppressWarnings("unchecked")
    Map<String, Object> spec = (Map<String, Object>) egressIp("ns1").getAdditionalProperties().get("spec");
    assertThat(spec.get("egressIPs")).isEqualTo(List.of("198.51.100.200"));
    client.genericKubernetesResources(EGRESS_IP).withName("egressipam-" + cluster.n("ns1")).delete();
  }
}
