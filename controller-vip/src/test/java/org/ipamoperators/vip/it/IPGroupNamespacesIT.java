package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Which namespaces' Services an IPGroup serves, on the real apiserver: {@code namespaces} (names) and
 * {@code namespaceSelector} (the namespace's labels, read with a GET), each alone and both together.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class IPGroupNamespacesIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private Operator operator;
  private VipCluster cluster;
  private KubernetesClient client;
  private String ns;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    this.ns = client.getNamespace();
    cluster = new VipCluster(client);
    operator = VipCluster.startOperator(server);
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  private static IPGroupSpec spec(String cidr, List<String> namespaces, Map<String, String> namespaceLabels) {
    LabelSelector selector = namespaceLabels == null ? null
        : new LabelSelectorBuilder().withMatchLabels(namespaceLabels).build();
    return new IPGroupSpec(null, null, List.of(cidr), null, null, selector, null, null, namespaces);
  }

  private void awaitNoPool(String service, String... texts) {
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.ingress(service)).as("addresses given to " + service).isEmpty();
      assertThat(cluster.events(service)).anySatisfy(e -> {
        assertThat(e.getType()).isEqualTo("Warning");
        assertThat(e.getReason()).isEqualTo("NoPool");
        assertThat(e.getMessage()).contains(texts);
      });
    });
  }

  private void setNamespaces(String group, List<String> namespaces, Map<String, String> labels) {
    client.resources(IPGroup.class).withName(group).edit(g -> {
      g.setSpec(spec(g.getSpec().cidrs().get(0), namespaces, labels));
      return g;
    });
  }

  @Test
  void aServiceOfANamespaceTheGroupDoesNotNameGetsNoAddressFromItAndIsToldWhy() {
    cluster.group("team-a-only", spec("192.0.2.0/29", List.of("team-a"), null));
    cluster.create(cluster.lb("web"));
    awaitNoPool("web", "team-a-only: its namespaces do not include namespace " + ns);
    assertThat(cluster.ingress("web")).isEmpty();
    assertThat(cluster.claims()).isEmpty();

    // Named in the group: served.
    setNamespaces("team-a-only", List.of("team-a", ns), null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("web")).containsExactly("192.0.2.1"));
  }

  @Test
  void namesAndNamespaceSelectorMustBothMatchWhenBothAreSet() {
    client.namespaces().withName(ns).edit(n -> {
      n.getMetadata().getLabels().put("team", "a");
      return n;
    });
    // Right labels, wrong names; right names, wrong labels.
    cluster.group("labels-only", spec("192.0.2.0/29", List.of("team-a"), Map.of("team", "a")));
    cluster.group("names-only", spec("198.51.100.0/29", List.of(ns), Map.of("team", "b")));
    cluster.create(cluster.lb("web"));
    awaitNoPool("web", "labels-only: its namespaces do not include namespace " + ns,
        "names-only: its namespaceSelector does not match namespace " + ns);
    assertThat(cluster.ingress("web")).isEmpty();
    assertThat(cluster.claims()).isEmpty();

    setNamespaces("names-only", List.of(ns), Map.of("team", "a"));
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("web")).containsExactly("198.51.100.1"));
  }
}
