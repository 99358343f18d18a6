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
    KeepalivedCluster.checkEverySeenConfiguration();
  }

  private void awaitEvent(String object, String reason, String text) {
    cluster.awaitEvent(object, reason, text, WAIT);
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

  @Test
  void reReconcilingAnUnchangedGroupWritesNothing() {
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.externalIps("web", "g1", "192.0.2.10", "192.0.2.9");
    // The ConfigMap is written before the DaemonSet: wait for both before taking their versions.
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("192.0.2.10");
      assertThat(client.apps().daemonSets().withName("g1").get()).isNotNull();
    });
    String config = cluster.config("g1", "a");
    String cmVersion = client.configMaps().withName("g1").get().getMetadata().getResourceVersion();
    String dsVersion = client.apps().daemonSets().withName("g1").get().getMetadata().getResourceVersion();
    // A LoadBalancer without address yet: the group reconciles (its status counts it) but no instance, no id.
    cluster.loadBalancer("pending", "g1", List.of());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.serviceCount("g1")).isEqualTo(2));
    awaitEvent("pending", "NoVIPYet", "no VIP");
    assertThat(cluster.routerIds("g1")).containsOnlyKeys(cluster.ns + "/web");
    assertThat(client.configMaps().withName("g1").get().getMetadata().getResourceVersion()).isEqualTo(cmVersion);
    assertThat(client.apps().daemonSets().withName("g1").get().getMetadata().getResourceVersion())
        .isEqualTo(dsVersion);
    assertThat(cluster.config("g1", "a")).isEqualTo(config);
    // Its address arrives: now it is announced.
    cluster.setIngress("pending", List.of("192.0.2.30"));
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("192.0.2.30");
      assertThat(cluster.routerIds("g1")).containsOnlyKeys(cluster.ns + "/web", cluster.ns + "/pending");
    });
  }

  @Test
  void exhaustedRouterIdsConcernOnlyTheServicesWithoutOne() {
    cluster.node("a", "203.0.113.10");
    KeepalivedCluster.SpecBuilder spec = KeepalivedCluster.spec(cluster.ns);
    spec.blacklist = java.util.stream.IntStream.rangeClosed(1, 255).filter(i -> i != 250 && i != 251).boxed().toList();
    cluster.group("g1", spec.build());
    cluster.externalIps("a1", "g1", "192.0.2.1");
    cluster.externalIps("a2", "g1", "192.0.2.2");
    cluster.externalIps("a3", "g1", "192.0.2.3");
    awaitEvent("a3", "RouterIDsExhausted", "no VRRP router id");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.routerIds("g1")).containsOnly(Map.entry(cluster.ns + "/a1", 250),
          Map.entry(cluster.ns + "/a2", 251));
      assertThat(cluster.config("g1", "a")).contains("192.0.2.1", "192.0.2.2").doesNotContain("192.0.2.3");
      assertThat(cluster.condition("g1", "RouterIDsExhausted")).isEqualTo("True");
      assertThat(cluster.condition("g1", "ServiceProblems")).isEqualTo("True");
      assertThat(cluster.condition("g1", "Ready")).isEqualTo("True");
    });
    assertThat(cluster.events("a1")).noneSatisfy(e -> assertThat(e.getType()).isEqualTo("Warning"));
    // One leaves: the waiting service gets its id, the conditions clear.
    client.services().withName("a1").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.routerIds("g1")).containsOnly(Map.entry(cluster.ns + "/a2", 251),
          Map.entry(cluster.ns + "/a3", 250));
      assertThat(cluster.config("g1", "a")).contains("192.0.2.3").doesNotContain("192.0.2.1\n");
      assertThat(cluster.condition("g1", "RouterIDsExhausted")).isEqualTo("False");
      assertThat(cluster.condition("g1", "ServiceProblems")).isEqualTo("False");
    });
  }

  @Test
  void twoGroupsOnOneNetworkNeverShareARouterId() {
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.group("g2", KeepalivedCluster.spec(cluster.ns).build());
    KeepalivedCluster.SpecBuilder elsewhere = KeepalivedCluster.spec(cluster.ns);
    elsewhere.space = "other-lan";
    cluster.group("g3", elsewhere.build());
    for (int i = 0; i < 6; i++) {
      cluster.externalIps("one-" + i, "g1", "192.0.2." + (10 + i));
      cluster.externalIps("two-" + i, "g2", "192.0.2." + (20 + i));
    }
    cluster.externalIps("three", "g3", "192.0.2.30");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.routerIds("g1")).hasSize(6);
      assertThat(cluster.routerIds("g2")).hasSize(6);
      assertThat(cluster.routerIds("g3")).hasSize(1);
    });
    java.util.Set<Integer> all = new java.util.HashSet<>(cluster.routerIds("g1").values());
    all.addAll(cluster.routerIds("g2").values());
    assertThat(all).hasSize(12);
    // A group in a router-id space of its own (another network) counts from 1 again.
    assertThat(cluster.routerIds("g3")).containsValue(1);
    assertThat(all).contains(1);
    assertThat(cluster.claims()).hasSize(13);
  }

  @Test
  void badAnnotationsAreReportedOnTheServiceAndTheRestIsStillAnnounced() {
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.externalIps("noslash", "g1", "192.0.2.40");
    cluster.annotate("noslash", KeepalivedAnnotations.GROUP, "g1");
    cluster.externalIps("missing", cluster.ns + "/nosuchgroup", "192.0.2.41");
    cluster.externalIps("badjson", "g1", "192.0.2.42");
    cluster.annotate("badjson", KeepalivedAnnotations.VERBATIM_CONFIG, "{not json");
    cluster.externalIps("managed", "g1", "192.0.2.43");
    cluster.annotate("managed", KeepalivedAnnotations.VERBATIM_CONFIG,
        "{\"virtual_router_id\": \"7\", \"track_src_ip\": \"\"}");
    awaitEvent("noslash", "InvalidKeepalivedGroup", "<namespace>/<name>");
    awaitEvent("missing", "KeepalivedGroupNotFound", "nosuchgroup");
    awaitEvent("badjson", "InvalidServiceConfig", "not a JSON object");
    awaitEvent("managed", "VerbatimConfigRefused", "virtual_router_id");
    await().atMost(WAIT).untilAsserted(() -> {
      String a = cluster.config("g1", "a");
      assertThat(a).contains("192.0.2.42", "192.0.2.43", "track_src_ip").doesNotContain("192.0.2.40", "192.0.2.41");
      assertThat(a.split("virtual_router_id", -1)).hasSize(3); // one per instance, the refused one not added
    });
  }

  @Test
  void loopbackMetadataAndOtherSpecialAddressesAreNeverAnnounced() {
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    // Another load-balancer class (or anyone who may write services/status) put these in the status.
    cluster.loadBalancer("sneaky", "g1", List.of("127.0.0.1", "169.254.169.254", "192.0.2.50"));
    cluster.externalIps("reserved", "g1", "240.0.0.9", "192.0.2.51");
    cluster.externalIps("fine", "g1", "192.0.2.52");
    awaitEvent("sneaky", "InvalidServiceConfig", "127.0.0.1 is loopback");
    awaitEvent("sneaky", "InvalidServiceConfig", "169.254.169.254 is the cloud instance metadata address");
    awaitEvent("reserved", "InvalidServiceConfig", "240.0.0.9 is reserved");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("192.0.2.50", "192.0.2.51", "192.0.2.52")
          .doesNotContain("127.0.0.1", "169.254.169.254", "240.0.0.9");
      assertThat(cluster.condition("g1", "ServiceProblems")).isEqualTo("True");
    });
    assertThat(cluster.events("fine")).noneSatisfy(e -> assertThat(e.getType()).isEqualTo("Warning"));
    // Once no Service asks for one, the condition clears.
    cluster.setIngress("sneaky", List.of("192.0.2.50"));
    client.services().withName("reserved").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.condition("g1", "ServiceProblems")).isEqualTo("False");
      assertThat(cluster.config("g1", "a")).contains("192.0.2.50").doesNotContain("192.0.2.51");
    });
  }

  @Test
  void groupEditsAreAppliedAndABadEditLeavesTheRunningConfiguration() {
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.externalIps("web", "g1", "192.0.2.10");
    String web = cluster.ns + "/web";
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("advert_int 0.1");
      assertThat(cluster.routerIds("g1")).containsKey(web);
    });
    int id = cluster.routerIds("g1").get(web);

    // keepalived's own timing, and the id blacklisted: the service moves to another id, with an Event.
    KeepalivedCluster.SpecBuilder slow = KeepalivedCluster.spec(cluster.ns);
    slow.advert = "1s";
    slow.blacklist = List.of(id);
    cluster.editGroup("g1", s -> slow.build());
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("advert_int 1\n");
      assertThat(cluster.routerIds("g1").get(web)).isNotNull().isNotEqualTo(id);
    });
    awaitEvent("g1", "RouterIDMoved", web);
    String good = cluster.config("g1", "a");

    // A spec the controller refuses (a priority above the preferred nodes'): Ready=False, nothing rewritten.
    cluster.editGroup("g1", s -> new org.ipamoperators.keepalived.api.KeepalivedGroupSpec(null, "eth0", null,
        s.nodeSelector(), null, null, s.blacklistRouterIDs(), null, null, null, null, "1s", 250, 200, null, null, null,
        null, null, null));
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.condition("g1", "Ready")).isEqualTo("False"));
    awaitEvent("g1", "InvalidSpec", "ownerPriority");
    assertThat(cluster.config("g1", "a")).isEqualTo(good);
    cluster.editGroup("g1", s -> slow.build());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.condition("g1", "Ready")).isEqualTo("True"));
  }

  @Test
  void generatedObjectsAreRepairedAndTheGroupsDeletionReleasesItsIds() {
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.externalIps("web", "g1", "192.0.2.10");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("192.0.2.10");
      assertThat(client.apps().daemonSets().withName("g1").get()).isNotNull(); // written after the ConfigMap
    });
    client.configMaps().withName("g1").delete();
    client.apps().daemonSets().withName("g1").edit(d -> {
      d.getSpec().getTemplate().getSpec().setHostNetwork(false);
      return d;
    });
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("192.0.2.10");
      assertThat(client.apps().daemonSets().withName("g1").get().getSpec().getTemplate().getSpec().getHostNetwork())
          .isTrue();
    });
    assertThat(cluster.claimsOf("g1")).hasSize(1);
    client.resources(KeepalivedGroup.class).withName("g1").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.group("g1")).isNull();
      assertThat(cluster.claimsOf("g1")).isEmpty();
    });
    awaitEvent("web", "KeepalivedGroupNotFound", "g1");
  }
}
