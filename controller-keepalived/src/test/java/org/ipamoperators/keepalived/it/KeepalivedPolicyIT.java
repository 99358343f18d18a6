package org.ipamoperators.keepalived.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.keepalived.KeepalivedSettings;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The operator's trust boundary around KeepalivedGroups (a group's pods run as root on the host network): allowed
 * images and namespaces, a per-namespace router-id quota, group-level programs refused, and one metrics port per
 * group so that two groups can share a node.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"})
class KeepalivedPolicyIT {
  static final Duration WAIT = Duration.ofSeconds(30);
  private KeepalivedCluster cluster;
  private KubernetesClient client;
  private KubeApiServer server;
  private Operator operator;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    this.server = server;
    cluster = new KeepalivedCluster(client);
  }

  @AfterEach
  void stop() {
    if (operator != null) {
      operator.stop();
    }
    cluster.close();
  }

  @AfterAll
  static void everyConfigurationPassesKeepalivedsConfigTest() {
    KeepalivedCluster.checkEverySeenConfiguration();
  }

  private DaemonSet daemonSet(String group) {
    return client.apps().daemonSets().withName(group).get();
  }

  private static Container reloader(DaemonSet ds) {
    return ds.getSpec().getTemplate().getSpec().getContainers().stream()
        .filter(c -> c.getName().equals("config-reloader")).findFirst().orElseThrow();
  }

  private String reason(String group, String type) {
    var g = cluster.group(group);
    return g == null || g.getStatus() == null || g.getStatus().conditions() == null ? null
        : g.getStatus().conditions().stream().filter(c -> type.equals(c.getType())).map(c -> c.getReason())
            .findFirst().orElse(null);
  }

  @Test
  void twoGroupsOnOneNodeGetMetricsPortsOfTheirOwnBoundToThePodAddress() {
    operator = KeepalivedCluster.startOperator(server);
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.group("g2", KeepalivedCluster.spec(cluster.ns).build());
    cluster.externalIps("web1", "g1", "192.0.2.10");
    cluster.externalIps("web2", "g2", "192.0.2.11");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(daemonSet("g1")).isNotNull();
      assertThat(daemonSet("g2")).isNotNull();
    });
    Container r1 = reloader(daemonSet("g1"));
    Container r2 = reloader(daemonSet("g2"));
    int p1 = r1.getPorts().get(0).getContainerPort();
    int p2 = r2.getPorts().get(0).getContainerPort();
    assertThat(p1).isNotEqualTo(p2);
    assertThat(List.of(p1, p2)).allSatisfy(p -> assertThat(p).isBetween(9650, 9899));
    assertThat(r1.getArgs()).contains("--metrics-port=" + p1, "--bind-address=$(POD_IP)")
        .doesNotContain("--bind-address=0.0.0.0");
    assertThat(r1.getEnv()).anySatisfy(e -> {
      assertThat(e.getName()).isEqualTo("POD_IP");
      assertThat(e.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("status.podIP");
    });
    assertThat(cluster.portClaimsOf("g1")).singleElement().satisfies(c -> assertThat(c.getSpec().id()).isEqualTo(p1));
    assertThat(cluster.portClaimsOf("g2")).singleElement().satisfies(c -> assertThat(c.getSpec().id()).isEqualTo(p2));
    // The port goes back to the ledger with the group.
    client.resources(org.ipamoperators.keepalived.api.KeepalivedGroup.class).withName("g1").delete();
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.allClaimsOf("g1")).isEmpty());
  }

  @Test
  void aGroupNamingAnImageTheOperatorDoesNotAllowGetsNoPods() {
    operator = KeepalivedCluster.startOperator(server,
        KeepalivedCluster.SETTINGS.withAllowedImages(List.of("registry.example/keepalived:*")));
    cluster.node("a", "203.0.113.10");
    KeepalivedCluster.SpecBuilder evil = KeepalivedCluster.spec(cluster.ns);
    evil.image = "docker.io/attacker/rootkit:latest";
    cluster.group("evil", evil.build());
    KeepalivedCluster.SpecBuilder listed = KeepalivedCluster.spec(cluster.ns);
    listed.image = "registry.example/keepalived:2.3";
    cluster.group("listed", listed.build());
    cluster.group("plain", KeepalivedCluster.spec(cluster.ns).build());
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.condition("evil", "Ready")).isEqualTo("False");
      assertThat(reason("evil", "Ready")).isEqualTo("NotAllowed");
      assertThat(daemonSet("listed")).isNotNull();
      assertThat(daemonSet("plain")).isNotNull();
    });
    cluster.awaitEvent("evil", "NotAllowed", "docker.io/attacker/rootkit:latest is not allowed", WAIT);
    assertThat(daemonSet("evil")).isNull();
    assertThat(cluster.allClaimsOf("evil")).isEmpty();
  }

  @Test
  void groupsOfANamespaceTheOperatorDoesNotServeGetNothing() {
    operator = KeepalivedCluster.startOperator(server,
        KeepalivedCluster.SETTINGS.withAllowedNamespaces(Set.of("network-team")));
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.externalIps("web", "g1", "192.0.2.10");
    await().atMost(WAIT).untilAsserted(() -> assertThat(reason("g1", "Ready")).isEqualTo("NotAllowed"));
    cluster.awaitEvent("g1", "NotAllowed", "only in namespaces [network-team]", WAIT);
    assertThat(daemonSet("g1")).isNull();
    assertThat(cluster.allClaimsOf("g1")).isEmpty();
  }

  @Test
  void groupLevelProgramsAreRefusedUnlessTheOperatorAllowsThem() {
    operator = KeepalivedCluster.startOperator(server);
    cluster.node("a", "203.0.113.10");
    KeepalivedCluster.SpecBuilder spec = KeepalivedCluster.spec(cluster.ns);
    spec.verbatim = Map.of("notify_fifo", "\"/run/keepalived.fifo\"", "vrrp_garp_master_refresh", "60");
    cluster.group("g1", spec.build());
    await().atMost(WAIT).untilAsserted(() -> assertThat(reason("g1", "Ready")).isEqualTo("NotAllowed"));
    cluster.awaitEvent("g1", "NotAllowed", "[notify_fifo] run programs as root", WAIT);
    assertThat(daemonSet("g1")).isNull();
    operator.stop();
    operator = KeepalivedCluster.startOperator(server, KeepalivedCluster.SETTINGS.withAllowGroupPrograms(true));
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.condition("g1", "Ready")).isEqualTo("True");
      assertThat(daemonSet("g1")).isNotNull();
    });
  }

  @Test
  void onlyTheWatchedNamespacesAreSeen() {
    String other = "unwatched-" + Integer.toHexString(cluster.ns.hashCode() & 0xfffffff);
    client.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata()
        .withName(other).endMetadata().build()).create();
    try {
      operator = KeepalivedCluster.startOperator(server,
          KeepalivedCluster.SETTINGS.withWatchNamespaces(Set.of(cluster.ns)));
      cluster.node("a", "203.0.113.10");
      var unseen = new org.ipamoperators.keepalived.api.KeepalivedGroup();
      unseen.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("unseen")
          .withNamespace(other).build());
      unseen.setSpec(KeepalivedCluster.spec(cluster.ns).build());
      client.resources(org.ipamoperators.keepalived.api.KeepalivedGroup.class).inNamespace(other).resource(unseen)
          .create();
      cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
      cluster.externalIps("web", "g1", "192.0.2.10");
      await().atMost(WAIT).untilAsserted(() -> {
        assertThat(cluster.condition("g1", "Ready")).isEqualTo("True");
        assertThat(daemonSet("g1")).isNotNull();
      });
      var seen = client.resources(org.ipamoperators.keepalived.api.KeepalivedGroup.class).inNamespace(other)
          .withName("unseen").get();
      assertThat(seen).isNotNull();
      assertThat(seen.getStatus()).isNull();
      assertThat(seen.getMetadata().getFinalizers()).isNullOrEmpty();
      assertThat(client.apps().daemonSets().inNamespace(other).withName("unseen").get()).isNull();
    } finally {
      client.resources(org.ipamoperators.keepalived.api.KeepalivedGroup.class).inNamespace(other).delete();
      client.namespaces().withName(other).delete();
    }
  }

  @Test
  void oneNamespaceCannotTakeMoreRouterIdsThanItsQuota() {
    operator = KeepalivedCluster.startOperator(server, KeepalivedCluster.SETTINGS.withRouterIdsPerNamespace(2));
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.group("g2", KeepalivedCluster.spec(cluster.ns).build());
    cluster.externalIps("a1", "g1", "192.0.2.10");
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.routerIds("g1")).hasSize(1));
    cluster.externalIps("b1", "g2", "192.0.2.20");
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.routerIds("g2")).hasSize(1));
    cluster.externalIps("b2", "g2", "192.0.2.21");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.condition("g2", "RouterIDsExhausted")).isEqualTo("True");
      assertThat(reason("g2", "RouterIDsExhausted")).isEqualTo("NamespaceQuotaReached");
    });
    assertThat(cluster.routerIds("g2")).hasSize(1);
    long vrrpIds = cluster.claims().stream().filter(c -> c.getSpec().space().startsWith("vrrp-")
        && cluster.ns.equals(c.getSpec().owner().namespace())).count();
    assertThat(vrrpIds).isEqualTo(2);
    // An id given back makes room again.
    client.services().withName("a1").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.routerIds("g2")).hasSize(2);
      assertThat(cluster.condition("g2", "RouterIDsExhausted")).isEqualTo("False");
    });
  }
}
