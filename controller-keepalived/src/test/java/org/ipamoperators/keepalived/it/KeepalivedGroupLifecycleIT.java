package org.ipamoperators.keepalived.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.keepalived.KeepalivedControllers;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.PasswordAuth;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Restarts, the password Secret, the namespace selector, the PodMonitor API appearing later, and the unicast,
 * interfaceFromIP and spread variants, on a real API server; every configuration read from a ConfigMap passes the
 * real {@code keepalived --config-test} at the end.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"})
class KeepalivedGroupLifecycleIT {
  static final Duration WAIT = Duration.ofSeconds(30);
  private Operator operator;
  private KeepalivedCluster cluster;
  private KubernetesClient client;
  private KubeApiServer server;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    this.server = server;
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
    KeepalivedCluster.checkEverySeenConfiguration();
  }

  private void awaitEvent(String object, String reason, String text) {
    cluster.awaitEvent(object, reason, text, WAIT);
  }

  @Test
  void aRestartKeepsEveryRouterIdEvenWithTheStatusLost() {
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    for (int i = 0; i < 5; i++) {
      cluster.externalIps("s" + i, "g1", "192.0.2." + (10 + i));
    }
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.routerIds("g1")).hasSize(5));
    Map<String, Integer> before = Map.copyOf(cluster.routerIds("g1"));
    operator.stop();

    // While no operator runs: the status is wiped, one service leaves, two arrive.
    client.resources(KeepalivedGroup.class).withName("g1").editStatus(g -> {
      g.setStatus(null);
      return g;
    });
    client.services().withName("s0").delete();
    cluster.externalIps("n1", "g1", "192.0.2.21");
    cluster.externalIps("n2", "g1", "192.0.2.22");

    operator = KeepalivedCluster.startOperator(server);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.routerIds("g1")).hasSize(6)
        .doesNotContainKey(cluster.ns + "/s0"));
    Map<String, Integer> after = cluster.routerIds("g1");
    for (int i = 1; i < 5; i++) {
      String key = cluster.ns + "/s" + i;
      assertThat(after.get(key)).as(key).isEqualTo(before.get(key));
    }
    assertThat(after.values()).doesNotHaveDuplicates();
    assertThat(cluster.claimsOf("g1")).hasSize(6);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.config("g1", "a"))
        .contains("virtual_router_id " + after.get(cluster.ns + "/n2")).doesNotContain("192.0.2.10\n"));
  }

  @Test
  void thePasswordComesFromTheWatchedSecret() {
    cluster.node("a", "203.0.113.10");
    client.secrets().resource(new SecretBuilder().withNewMetadata().withName("vrrp").endMetadata()
        .withStringData(Map.of("password", "s3cret1")).build()).create();
    KeepalivedCluster.SpecBuilder spec = KeepalivedCluster.spec(cluster.ns);
    spec.passwordAuth = new PasswordAuth(new PasswordAuth.SecretRef("vrrp"), null);
    cluster.group("g1", spec.build());
    cluster.externalIps("web", "g1", "192.0.2.10");
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.config("g1", "a")).contains("auth_pass s3cret1"));

    client.secrets().withName("vrrp").edit(s -> {
      s.setData(null);
      s.setStringData(Map.of("password", "s3cret2"));
      return s;
    });
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.config("g1", "a")).contains("auth_pass s3cret2"));

    // The Secret goes: the running configuration stays, the group says why.
    client.secrets().withName("vrrp").delete();
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.condition("g1", "Ready")).isEqualTo("False"));
    awaitEvent("g1", "PasswordUnavailable", "vrrp");
    assertThat(cluster.config("g1", "a")).contains("auth_pass s3cret2");
    client.secrets().resource(new SecretBuilder().withNewMetadata().withName("vrrp").endMetadata()
        .withStringData(Map.of("password", "s3cret3")).build()).create();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.condition("g1", "Ready")).isEqualTo("True");
      assertThat(cluster.config("g1", "a")).contains("auth_pass s3cret3");
    });
  }

  @Test
  void onlyAllowedNamespacesAttachVips() {
    cluster.node("a", "203.0.113.10");
    KeepalivedCluster.SpecBuilder spec = KeepalivedCluster.spec(cluster.ns);
    spec.namespaceSelector = new LabelSelectorBuilder().withMatchLabels(Map.of("vip-tier", "gold")).build();
    cluster.group("g1", spec.build());
    cluster.externalIps("web", "g1", "192.0.2.10");
    awaitEvent("web", "NamespaceNotAllowed", cluster.ns);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.condition("g1", "ServiceProblems")).isEqualTo("True");
      assertThat(cluster.routerIds("g1")).isEmpty();
    });
    assertThat(cluster.config("g1", "a")).doesNotContain("192.0.2.10");
    client.namespaces().withName(cluster.ns).edit(n -> {
      n.getMetadata().getLabels().put("vip-tier", "gold");
      return n;
    });
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("192.0.2.10");
      assertThat(cluster.condition("g1", "ServiceProblems")).isEqualTo("False");
    });
  }

  @Test
  void aPodMonitorIsCreatedWhenTheApiAppearsLater() {
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.condition("g1", "Ready")).isEqualTo("True"));
    boolean servedBefore = client.getApiResources("monitoring.coreos.com/v1") != null;
    if (!servedBefore) {
      assertThat(client.apps().daemonSets().withName("g1").get()).isNotNull();
      ThirdPartyCrd.install(client, ThirdPartyCrd.POD_MONITOR);
    }
    await().atMost(WAIT).untilAsserted(() -> {
      GenericKubernetesResource pm = ThirdPartyCrd.POD_MONITOR.resources(client).withName("g1").get();
      assertThat(pm).isNotNull();
      assertThat(pm.getMetadata().getLabels()).containsEntry(KeepalivedAnnotations.GROUP_LABEL, "g1");
      assertThat(pm.getMetadata().getOwnerReferences()).singleElement()
          .satisfies(r -> assertThat(r.getKind()).isEqualTo("KeepalivedGroup"));
      assertThat(pm.get("spec", "selector", "matchLabels").toString()).contains("g1");
    });
  }

  /**
   * Objects an earlier version applied (as ipam-keepalived, without JOSDK's annotation) are taken over without a
   * write; they stay ipam-keepalived's alone, and only a real change of the configuration is written and counted.
   */
  @Test
  void objectsOfAnEarlierVersionAreTakenOverWithoutAWrite() {
    if (client.getApiResources("monitoring.coreos.com/v1") == null) {
      ThirdPartyCrd.install(client, ThirdPartyCrd.POD_MONITOR);
    }
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.externalIps("web", "g1", "192.0.2.10");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("192.0.2.10");
      assertThat(ThirdPartyCrd.POD_MONITOR.resources(client).withName("g1").get()).isNotNull();
    });
    operator.stop();
    List<io.fabric8.kubernetes.client.dsl.Resource<? extends HasMetadata>> objects = List.of(
        client.configMaps().withName("g1"), client.apps().daemonSets().withName("g1"),
        ThirdPartyCrd.POD_MONITOR.resources(client).withName("g1"));
    for (var object : objects) {
      object.edit(o -> {
        o.getMetadata().getAnnotations().remove("javaoperatorsdk.io/previous");
        return o;
      });
    }
    List<String> versions = objects.stream().map(o -> o.get().getMetadata().getResourceVersion()).toList();

    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    KubernetesClient c = server.newClient();
    operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
    KeepalivedControllers.register(operator, c, registry, KeepalivedCluster.SETTINGS);
    operator.start();
    // A Service without an address yet: the group reconciles (its status counts it), its configuration is the same.
    cluster.loadBalancer("pending", "g1", List.of());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.serviceCount("g1")).isEqualTo(2));
    assertThat(objects.stream().map(o -> o.get().getMetadata().getResourceVersion()).toList()).isEqualTo(versions);
    assertThat(registry.find("ipam_keepalived_group_config_changes").counter()).isNull();
    for (var object : objects) {
      assertThat(object.get().getMetadata().getManagedFields())
          .filteredOn(f -> "Apply".equals(f.getOperation())).extracting(ManagedFieldsEntry::getManager)
          .containsExactly("ipam-keepalived");
    }

    cluster.setIngress("pending", List.of("192.0.2.30"));
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("192.0.2.30");
      assertThat(registry.find("ipam_keepalived_group_config_changes").counter()).isNotNull()
          .satisfies(counter -> assertThat(counter.count()).isEqualTo(1.0));
    });
    assertThat(client.apps().daemonSets().withName("g1").get().getMetadata().getResourceVersion())
        .isEqualTo(versions.get(1));
  }

  /**
   * A write the API server refuses (here the DaemonSet's invalid priorityClassName): Ready False with reason
   * ApplyFailed and a Warning Event on the group; the ConfigMap before it is written, the PodMonitor after it is
   * not. The spec repaired, everything is written.
   */
  @Test
  void aRefusedWriteIsReportedAndNothingAfterItIsWritten() {
    if (client.getApiResources("monitoring.coreos.com/v1") == null) {
      ThirdPartyCrd.install(client, ThirdPartyCrd.POD_MONITOR);
    }
    cluster.node("a", "203.0.113.10");
    KeepalivedCluster.SpecBuilder spec = KeepalivedCluster.spec(cluster.ns);
    spec.priorityClassName = "Not_A_Name";
    cluster.group("g1", spec.build());
    cluster.externalIps("web", "g1", "192.0.2.10");
    awaitEvent("g1", "ApplyFailed", "the API server refused an object of the group (422)");
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.group("g1").getStatus().conditions())
        .anySatisfy(c -> {
          assertThat(c.getType()).isEqualTo("Ready");
          assertThat(c.getStatus()).isEqualTo("False");
          assertThat(c.getReason()).isEqualTo("ApplyFailed");
        }));
    assertThat(cluster.config("g1", "a")).contains("192.0.2.10");
    assertThat(client.apps().daemonSets().withName("g1").get()).isNull();
    assertThat(ThirdPartyCrd.POD_MONITOR.resources(client).withName("g1").get()).isNull();

    spec.priorityClassName = null;
    cluster.editGroup("g1", s -> spec.build());
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.condition("g1", "Ready")).isEqualTo("True");
      assertThat(client.apps().daemonSets().withName("g1").get()).isNotNull();
      assertThat(ThirdPartyCrd.POD_MONITOR.resources(client).withName("g1").get()).isNotNull();
    });
  }

  @Test
  void unicastInterfaceFromIpAndSpreadVipsAreRenderedPerNode() {
    cluster.node("a", "203.0.113.10", "2001:db8::10");
    cluster.node("b", "203.0.113.11", "2001:db8::11");
    cluster.node("c", "203.0.113.12", "2001:db8::12");
    KeepalivedCluster.SpecBuilder spec = KeepalivedCluster.spec(cluster.ns);
    spec.unicast = true;
    spec.iface = null;
    spec.interfaceFromIp = "203.0.113.1";
    cluster.group("g1", spec.build());
    cluster.externalIps("dual", "g1", "192.0.2.10", "2001:db8::100");
    cluster.externalIps("spread", "g1", "192.0.2.20", "192.0.2.21", "192.0.2.22");
    cluster.annotate("spread", KeepalivedAnnotations.SPREAD_VIPS, "true");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.routerIds("g1")).containsKeys(cluster.ns + "/dual", cluster.ns + "/spread/192.0.2.20",
          cluster.ns + "/spread/192.0.2.21", cluster.ns + "/spread/192.0.2.22");
      String a = cluster.config("g1", "a");
      assertThat(a).contains("unicast_src_ip 203.0.113.10", "203.0.113.11", "203.0.113.12", "2001:db8::11",
          "interface ipam-from-ip", "2001:db8::100", "priority 200");
      assertThat(cluster.config("g1", "b")).contains("unicast_src_ip 203.0.113.11");
    });
    // Every spread VIP has its own preferred node.
    long preferred = List.of("a", "b", "c").stream().mapToLong(n -> cluster.config("g1", n).split("priority 200", -1).length - 1)
        .sum();
    assertThat(preferred).isEqualTo(3);
    List<String> args = client.apps().daemonSets().withName("g1").get().getSpec().getTemplate().getSpec()
        .getInitContainers().get(0).getArgs();
    assertThat(args).contains("--interface-from-ip=203.0.113.1", "--once");
    // A node leaves: its key leaves the ConfigMap and the peers are updated.
    cluster.deleteNode("c");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.configs("g1")).containsOnlyKeys(cluster.nodeName("a"), cluster.nodeName("b"));
      assertThat(cluster.config("g1", "a")).doesNotContain("203.0.113.12");
    });
  }

  @Test
  void aReleasedRouterIdWaitsOutItsGraceAndComesBackToItsService() {
    operator.stop();
    operator = KeepalivedCluster.startOperator(server,
        new org.ipamoperators.keepalived.KeepalivedSettings("test/keepalived:1", "test/ipam:1", Duration.ofSeconds(4)));
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    String s1 = cluster.ns + "/s1";
    String s2 = cluster.ns + "/s2";
    cluster.externalIps("s1", "g1", "192.0.2.10");
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.routerIds("g1")).containsKey(s1));
    int id = cluster.routerIds("g1").get(s1);

    // s1 leaves: its id is retired, not free; a newcomer gets another one.
    client.services().withName("s1").delete();
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.claimsOf("g1")).singleElement().satisfies(c ->
        assertThat(c.getMetadata().getLabels()).containsKey(
            org.ipamoperators.controller.common.ids.ClusterIdLedger.LABEL_RETIRED_AT)));
    cluster.externalIps("s2", "g1", "192.0.2.20");
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.routerIds("g1")).containsOnlyKeys(s2));
    assertThat(cluster.routerIds("g1").get(s2)).isNotEqualTo(id);
    // s1 is back within the grace: it gets its id again.
    cluster.externalIps("s1", "g1", "192.0.2.10");
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.routerIds("g1")).containsEntry(s1, id));
    assertThat(cluster.claimsOf("g1")).allSatisfy(c -> assertThat(c.getMetadata().getLabels()).doesNotContainKey(
        org.ipamoperators.controller.common.ids.ClusterIdLedger.LABEL_RETIRED_AT));

    // Gone for good: after the grace the id is released.
    client.services().withName("s1").delete();
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.claimsOf("g1"))
        .extracting(c -> c.getSpec().purpose()).containsExactly(s2));
  }

  @Test
  void routerIdsOfAGroupThatVanishedWithoutItsFinalizerAreReleased() {
    var ledger = new org.ipamoperators.controller.common.ids.ClusterIdLedger(client);
    var space = org.ipamoperators.controller.common.ids.IdSpace.vrrpRouterIds("default");
    var gone = new org.ipamoperators.controller.common.ledger.ClaimOwner("keepalived", "KeepalivedGroup", cluster.ns,
        "gone", "uid-1");
    var foreign = new org.ipamoperators.controller.common.ledger.ClaimOwner("someone-else", "KeepalivedGroup",
        cluster.ns, "gone", "uid-2");
    assertThat(ledger.claim(space, 77, cluster.ns + "/web", gone).ours()).isTrue();
    assertThat(ledger.claim(space, 78, cluster.ns + "/web", foreign).ours()).isTrue();
    await().atMost(WAIT).untilAsserted(() -> assertThat(ledger.get(space, 77)).isEmpty());
    assertThat(ledger.get(space, 78)).isPresent();
  }
}
