package org.ipamoperators.keepalived.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.config.ConfigCheckNode;
import org.ipamoperators.testsupport.keepalived.ConfigCheck;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * keepalived-operator's acceptance scenarios on a real API server: Services added, changed and removed, group
 * edits, the generated objects. No pod runs (no kubelet): the tests assert on the objects, and every
 * configuration read from a ConfigMap passes the real {@code keepalived --config-test} at the end.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"})
class KeepalivedGroupIT {
  static final Duration WAIT = Duration.ofSeconds(30);
  private Operator operator;
  private KeepalivedCluster cluster;
  private KubernetesClient client;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    cluster = new KeepalivedCluster(client);
    operator = KeepalivedCluster.startOperator(server);
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  @AfterAll
  static void everyConfigurationPassesKeepalivedsConfigTest() {
    assertThat(KeepalivedCluster.SEEN_CONFIGS).isNotEmpty();
    try (ConfigCheckNode checker = new ConfigCheckNode()) {
      for (String config : KeepalivedCluster.SEEN_CONFIGS) {
        ConfigCheck check = checker.check(config);
        assertThat(check.valid()).as("keepalived --config-test (exit %d):%n%s%n%s", check.exitCode(), check.output(),
            config).isTrue();
      }
    }
  }

  private void awaitEvent(String object, String reason, String text) {
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.events(object)).anySatisfy(e -> {
      assertThat(e.getReason()).isEqualTo(reason);
      assertThat(e.getMessage()).contains(text);
    }));
  }

  @Test
  void servicesAreAddedChangedAndRemoved() {
    cluster.node("a", "203.0.113.10");
    cluster.node("b", "203.0.113.11");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.externalIps("web", "g1", "192.0.2.10");
    // Union of ingress and external IPs, once each, sorted.
    cluster.loadBalancer("api", "g1", List.of("192.0.2.12"), "192.0.2.12", "192.0.2.11");
    cluster.externalIps("other", null, "192.0.2.99"); // not opted in

    String web = cluster.ns + "/web";
    String api = cluster.ns + "/api";
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.routerIds("g1")).containsOnlyKeys(web, api));
    Map<String, Integer> ids = cluster.routerIds("g1");
    assertThat(ids.get(web)).isNotEqualTo(ids.get(api)).isBetween(1, 255);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.configs("g1")).containsOnlyKeys(cluster.nodeName("a"), cluster.nodeName("b"));
      String a = cluster.config("g1", "a");
      assertThat(a).contains("vrrp_instance " + web + " {", "virtual_router_id " + ids.get(web), "192.0.2.10")
          .contains("vrrp_instance " + api + " {", "virtual_router_id " + ids.get(api))
          .doesNotContain("192.0.2.99");
      assertThat(a.indexOf("192.0.2.11")).isLessThan(a.indexOf("192.0.2.12"));
      assertThat(a.split("192\\.0\\.2\\.12", -1)).hasSize(2);
    });
    // The ledger holds the ids, owned by the group.
    assertThat(cluster.claimsOf("g1")).extracting(c -> c.getSpec().purpose() + "=" + c.getSpec().id())
        .containsExactlyInAnyOrder(web + "=" + ids.get(web), api + "=" + ids.get(api));
    assertThat(cluster.condition("g1", "Ready")).isEqualTo("True");

    // The generated objects.
    KeepalivedGroup g = cluster.group("g1");
    ConfigMap cm = client.configMaps().withName("g1").get();
    assertThat(cm.getMetadata().getLabels()).containsEntry(KeepalivedAnnotations.GROUP_LABEL, "g1");
    assertThat(cm.getMetadata().getOwnerReferences()).singleElement().satisfies(r -> {
      assertThat(r.getUid()).isEqualTo(g.getMetadata().getUid());
      assertThat(r.getController()).isTrue();
    });
    DaemonSet ds = client.apps().daemonSets().withName("g1").get();
    assertThat(ds.getMetadata().getOwnerReferences()).singleElement()
        .satisfies(r -> assertThat(r.getUid()).isEqualTo(g.getMetadata().getUid()));
    var pod = ds.getSpec().getTemplate().getSpec();
    assertThat(pod.getHostNetwork()).isTrue();
    assertThat(pod.getNodeSelector()).containsEntry("test", cluster.ns);
    assertThat(pod.getTolerations()).singleElement().satisfies(t -> assertThat(t.getOperator()).isEqualTo("Exists"));
    assertThat(pod.getContainers()).extracting(Container::getName).containsExactly("keepalived", "config-reloader");
    Container keepalived = pod.getContainers().get(0);
    assertThat(keepalived.getImage()).isEqualTo("test/keepalived:1");
    assertThat(keepalived.getSecurityContext().getCapabilities().getAdd())
        .containsExactlyInAnyOrder("NET_ADMIN", "NET_BROADCAST", "NET_RAW");
    assertThat(pod.getContainers().get(1).getImage()).isEqualTo("test/ipam:1");
    assertThat(pod.getInitContainers()).extracting(Container::getName).containsExactly("config-setup");
    assertThat(pod.getVolumes()).anySatisfy(v -> assertThat(v.getConfigMap().getName()).isEqualTo("g1"));

    // Changed: web's address moves; its router id stays.
    client.services().withName("web").edit(s -> {
      s.getSpec().setExternalIPs(List.of("192.0.2.20"));
      return s;
    });
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.config("g1", "a"))
        .contains("192.0.2.20").doesNotContain("192.0.2.10"));
    assertThat(cluster.routerIds("g1")).containsEntry(web, ids.get(web));

    // Removed: the annotation goes (api), the Service goes (web); their ids are released.
    cluster.annotate("api", KeepalivedAnnotations.GROUP, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.routerIds("g1")).containsOnlyKeys(web);
      assertThat(cluster.config("g1", "a")).doesNotContain(api);
    });
    client.services().withName("web").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.routerIds("g1")).isEmpty();
      assertThat(cluster.claimsOf("g1")).isEmpty();
      assertThat(cluster.config("g1", "a")).doesNotContain("vrrp_instance");
    });
  }
}
