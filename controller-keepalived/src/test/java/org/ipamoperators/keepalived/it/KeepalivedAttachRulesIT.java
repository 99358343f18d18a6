package org.ipamoperators.keepalived.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.keepalived.AttachRules;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupStatus;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Who may attach a Service to a KeepalivedGroup and which addresses it announces, on a real API server: a Service
 * of a namespace not allowed and a VIP outside the allowed CIDRs are left out of the ConfigMap, with a Warning Event
 * on the Service and the Service in the group's {@code status.refusedServices}; allowed ones are rendered.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"})
class KeepalivedAttachRulesIT {
  static final Duration WAIT = Duration.ofSeconds(30);
  private KeepalivedCluster cluster;
  private KubernetesClient client;
  private KubeApiServer server;
  private Operator operator;
  private String other;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    this.server = server;
    cluster = new KeepalivedCluster(client);
    other = "tenant-" + Integer.toHexString(cluster.ns.hashCode() & 0xfffffff);
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(other).endMetadata().build())
        .create();
  }

  @AfterEach
  void stop() {
    if (operator != null) {
      operator.stop();
    }
    client.services().inNamespace(other).delete();
    client.namespaces().withName(other).delete();
    cluster.close();
  }

  @AfterAll
  static void everyConfigurationPassesKeepalivedsConfigTest() {
    KeepalivedCluster.checkEverySeenConfiguration();
  }

  /** A Service of namespace {@code namespace} with external IPs, attached to group g1 of the test's namespace. */
  private void foreignService(String namespace, String name, String... ips) {
    client.services().inNamespace(namespace).resource(new ServiceBuilder().withNewMetadata().withName(name)
        .withAnnotations(Map.of(KeepalivedAnnotations.GROUP, cluster.ns + "/g1")).endMetadata().withNewSpec()
        .withSelector(Map.of("app", name)).addNewPort().withPort(80).withProtocol("TCP").endPort()
        .withExternalIPs(ips).endSpec().build()).create();
  }

  private List<Event> events(String namespace, String object) {
    return client.v1().events().inNamespace(namespace).list().getItems().stream()
        .filter(e -> object.equals(e.getInvolvedObject().getName())).toList();
  }

  private KeepalivedGroupStatus status() {
    KeepalivedGroup g = cluster.group("g1");
    return g == null || g.getStatus() == null ? new KeepalivedGroupStatus(null, null, null, null, null, null, null,
        null, null, null) : g.getStatus();
  }

  @Test
  void theOperatorsStrictDefaultRefusesOtherNamespacesAndAddressesOutsideItsCidrs() {
    operator = KeepalivedCluster.startOperator(server, KeepalivedCluster.SETTINGS.withAttachRules(
        AttachRules.parse(List.of(AttachRules.GROUP_NAMESPACE), List.of("192.0.2.0/24", "2001:db8::/64"))));
    cluster.node("a", "203.0.113.10", "2001:db8:ff::10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.externalIps("ok", "g1", "192.0.2.10", "2001:db8::10");
    cluster.externalIps("mixed", "g1", "192.0.2.11", "198.51.100.11", "2001:db8:1::11");
    foreignService(other, "foreign", "192.0.2.12");

    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(status().refusedServices()).containsExactly(cluster.ns + "/mixed", other + "/foreign");
      assertThat(status().refusedServiceCount()).isEqualTo(2);
      assertThat(cluster.condition("g1", "ServiceProblems")).isEqualTo("True");
      assertThat(cluster.condition("g1", "Ready")).isEqualTo("True");
      assertThat(cluster.config("g1", "a")).contains("192.0.2.10", "2001:db8::10", "192.0.2.11");
    });
    String config = cluster.config("g1", "a");
    assertThat(config).doesNotContain("198.51.100.11").doesNotContain("2001:db8:1::11").doesNotContain("192.0.2.12");
    cluster.awaitEvent("mixed", "VIPNotAllowed", "198.51.100.11, 2001:db8:1::11 are outside the addresses", WAIT);
    await().atMost(WAIT).untilAsserted(() -> assertThat(events(other, "foreign")).anySatisfy(e -> {
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getReason()).isEqualTo("NamespaceNotAllowed");
      assertThat(e.getMessage()).contains("Services of namespace " + other, "serviceNamespaces: [" + cluster.ns + "]");
    }));
    assertThat(events(cluster.ns, "ok")).noneMatch(e -> "Warning".equals(e.getType()));

    // Fixed at the Service: the condition clears and the list empties.
    client.services().withName("mixed").edit(s -> {
      s.getSpec().setExternalIPs(List.of("192.0.2.11"));
      return s;
    });
    client.services().inNamespace(other).withName("foreign").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.condition("g1", "ServiceProblems")).isEqualTo("False");
      assertThat(status().refusedServices()).isNullOrEmpty();
      assertThat(status().refusedServiceCount()).isNull();
    });
  }

  @Test
  void aGroupsOwnFieldsWinOverTheDefaultAndAnOldGroupWithoutThemAllowsEverything() {
    operator = KeepalivedCluster.startOperator(server);
    cluster.node("a", "203.0.113.10");
    KeepalivedCluster.SpecBuilder spec = KeepalivedCluster.spec(cluster.ns);
    spec.serviceNamespaces = List.of(other);
    spec.vipCidrs = List.of("198.51.100.0/24");
    cluster.group("g1", spec.build());
    cluster.externalIps("own", "g1", "198.51.100.20");
    foreignService(other, "tenant", "198.51.100.21", "203.0.113.21");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(status().refusedServices()).containsExactly(cluster.ns + "/own", other + "/tenant");
      assertThat(cluster.config("g1", "a")).contains("198.51.100.21");
    });
    assertThat(cluster.config("g1", "a")).doesNotContain("198.51.100.20").doesNotContain("203.0.113.21");
    cluster.awaitEvent("own", "NamespaceNotAllowed", "serviceNamespaces: [" + other + "]", WAIT);

    // keepalived-operator's objects have neither field: the operator's default (here: everything) applies.
    cluster.editGroup("g1", s -> KeepalivedCluster.spec(cluster.ns).build());
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("198.51.100.20", "198.51.100.21", "203.0.113.21");
      assertThat(status().refusedServices()).isNullOrEmpty();
    });

    // An empty list would be ambiguous: the API server refuses it.
    assertThatThrownBy(() -> client.resources(KeepalivedGroup.class).withName("g1").patch(
        PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"vipCIDRs\":[]}}"))
        .isInstanceOf(KubernetesClientException.class).hasMessageContaining("vipCIDRs");
  }
}
