package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The reference's bare-metal acceptance scenarios on OpenShift SDN, against a real API server.
 * Addresses are data only (documentation ranges); nothing carries traffic.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.INFRASTRUCTURE})
class SdnEgressIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final Map<String, String> WORKERS = Map.of("node-role.kubernetes.io/worker", "");
  private Operator operator;
  private EgressCluster cluster;
  private KubernetesClient client;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client, TestInfo info) {
    this.client = client;
    cluster = new EgressCluster(client, EgressCluster.prefix(info), true);
    operator = startOperator(server);
  }

  static Operator startOperator(KubeApiServer server) {
    KubernetesClient c = server.newClient();
    Operator op = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
    org.ipamoperators.egressip.EgressIPControllers.register(op, c,
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    op.start();
    return op;
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  private EgressIPAM ipam(String name) {
    return client.resources(EgressIPAM.class).withName(name).get();
  }

  private static String condition(EgressIPAM ipam, String type) {
    return EgressCluster.condition(ipam, type);
  }

  private List<Event> events(String ns) {
    return client.v1().events().inNamespace(cluster.n(ns)).list().getItems();
  }

  @Test
  void bareMetalSingleCidrSkipsReservedAndNodeAddressesAndUsesCidrMode() {
    // scenarios 1, 2, 3, 5: reserved .1 and .2; a node whose host address is .3 is not handed out
    String ipam = cluster.n("bm");
    cluster.node("w1", Map.of("egressGateway", "true"));
    cluster.node("w2", Map.of("egressGateway", "true"));
    cluster.node("other", Map.of()); // selected, but no label value: untouched
    client.nodes().withName(cluster.n("w1")).edit(n -> n); // no-op
    io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet hs = client
        .resources(io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet.class).withName(cluster.n("w1")).get();
    hs.setHostIP("198.51.100.3");
    client.resource(hs).update();
    cluster.ipam(ipam, "egressGateway", WORKERS, null, null, cidr("198.51.100.0/24", "true", "198.51.100.1", "198.51.100.2"));
    cluster.namespace("ns1", ipam, null);

    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isEqualTo("198.51.100.4");
      assertThat(cluster.netNamespaceIps("ns1")).containsExactly("198.51.100.4");
      assertThat(cluster.hostSubnetCidrs("w1")).containsExactly("198.51.100.0/24");
      assertThat(cluster.hostSubnetCidrs("w2")).containsExactly("198.51.100.0/24");
      assertThat(cluster.hostSubnetCidrs("other")).isEmpty();
      assertThat(condition(ipam(ipam), "Ready")).isEqualTo("True");
    });
    cluster.namespace("ns2", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns2")).isEqualTo("198.51.100.5");
      EgressIPAM status = ipam(ipam);
      assertThat(status.getStatus().assignedNamespaces()).isEqualTo(2);
      assertThat(status.getStatus().cidrs().get(0).allocated()).isEqualTo("2");
      assertThat(status.getStatus().networkType()).isEqualTo("OpenShiftSDN");
    });
    assertThat(cluster.egressIps("ns1")).isEqualTo("198.51.100.4");
    assertThat(Ledgers.ofPool(client, "egressipam/" + ipam)).hasSize(2);
  }

  @Test
  void twoCidrsArePlacedExplicitlyAndEvenlyWithDeterministicTies() {
    // scenarios 6 and 9
    String ipam = cluster.n("zones");
    for (String n : List.of("a1", "a2")) {
      cluster.node(n, Map.of("topology.kubernetes.io/zone", "a"));
    }
    for (String n : List.of("b1", "b2")) {
      cluster.node(n, Map.of("topology.kubernetes.io/zone", "b"));
    }
    cluster.ipam(ipam, "topology.kubernetes.io/zone", WORKERS, null, null,
        cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "b"));
    for (int i = 1; i <= 4; i++) {
      cluster.namespace("ns" + i, ipam, null);
    }
    await().atMost(WAIT).untilAsserted(() -> {
      for (int i = 1; i <= 4; i++) {
        assertThat(cluster.egressIps("ns" + i)).isEqualTo("192.0.2." + i + ",198.51.100." + i);
        assertThat(cluster.netNamespaceIps("ns" + i)).hasSize(2);
      }
      assertThat(cluster.hostSubnetIps("a1")).hasSize(2);
      assertThat(cluster.hostSubnetIps("a2")).hasSize(2);
      assertThat(cluster.hostSubnetIps("b1")).hasSize(2).allMatch(ip -> ip.startsWith("198.51.100."));
      assertThat(cluster.hostSubnetIps("b2")).hasSize(2);
      assertThat(cluster.hostSubnetCidrs("a1")).isEmpty();
    });
    Map<String, List<String>> hosted = cluster.hostedAnywhere();
    assertThat(hosted).hasSize(8).allSatisfy((ip, nodes) -> assertThat(nodes).hasSize(1));
  }

  @Test
  void aFailedNodesAddressesMoveAndStayWhenItRecovers() {
    // scenarios 23 and 24, with capacity-aware placement (scenario 39)
    String ipam = cluster.n("fo");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("a2", Map.of("zone", "a"));
    cluster.node("b1", Map.of("zone", "b"));
    cluster.ipam(ipam, "zone", WORKERS, 5, 0, cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "b"));
    cluster.namespace("ns1", ipam, null);
    cluster.namespace("ns2", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("a1")).containsExactly("192.0.2.1");
      assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.2");
    });
    cluster.setReady("a1", false);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("a1")).isEmpty();
      assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.1", "192.0.2.2");
    });
    assertThat(cluster.egressIps("ns1")).isEqualTo("192.0.2.1,198.51.100.1");
    cluster.setReady("a1", true);
    cluster.namespace("ns3", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.egressIps("ns3")).isNotNull());
    // a1 is still recovering (60 s window): nothing moves back, and ns3's zone-a address goes to a2
    await().atMost(WAIT).untilAsserted(() ->
        assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.1", "192.0.2.2", "192.0.2.3"));
    assertThat(cluster.hostSubnetIps("a1")).isEmpty();
  }

  @Test
  void aZoneWithNoReadyNodeIsReportedWhileTheOtherZoneIsServed() {
    // scenario 26
    String ipam = cluster.n("nozone");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("b1", Map.of("zone", "b"));
    cluster.setReady("b1", false);
    cluster.ipam(ipam, "zone", WORKERS, null, 0, cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "b"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("a1")).containsExactly("192.0.2.1");
      EgressIPAM x = ipam(ipam);
      assertThat(x.getStatus()).isNotNull();
      assertThat(x.getStatus().unplaceableIPs()).isEqualTo(1);
      assertThat(condition(x, "Degraded")).isEqualTo("True");
      assertThat(events("ns1")).anySatisfy(e -> assertThat(e.getMessage()).contains("no eligible node in group b"));
    });
  }

  @Test
  void aBadManualAnnotationIsRejectedAloneAndEveryOtherNamespaceIsServed() {
    // scenarios 17, 18, 19, 20, 21
    String ipam = cluster.n("manual");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("b1", Map.of("zone", "b"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a", "192.0.2.9"),
        cidr("198.51.100.0/24", "b"));
    cluster.namespace("good", ipam, null);
    cluster.namespace("manual", ipam, "192.0.2.7, 198.51.100.7"); // spaces are trimmed
    cluster.namespace("outside", ipam, "203.0.113.7,198.51.100.8");
    cluster.namespace("short", ipam, "192.0.2.10");
    cluster.namespace("reserved", ipam, "192.0.2.9,198.51.100.9");
    cluster.namespace("thief", ipam, "192.0.2.7,198.51.100.11");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("good")).isEqualTo("192.0.2.1,198.51.100.1");
      assertThat(cluster.egressIps("manual")).isEqualTo("192.0.2.7,198.51.100.7");
      assertThat(cluster.netNamespaceIps("manual")).containsExactly("192.0.2.7", "198.51.100.7");
      assertThat(events("outside")).anySatisfy(e -> assertThat(e.getMessage()).contains("203.0.113.7 is not in CIDR 192.0.2.0/24"));
      assertThat(events("short")).anySatisfy(e -> assertThat(e.getMessage()).contains("has 1 address for 2 CIDRs"));
      assertThat(events("reserved")).anySatisfy(e -> assertThat(e.getMessage()).contains("reserved"));
      assertThat(events("thief")).anySatisfy(e -> assertThat(e.getMessage()).contains("held by namespace " + cluster.n("manual")));
      assertThat(ipam(ipam).getStatus()).isNotNull();
      assertThat(ipam(ipam).getStatus().rejectedNamespaces()).isEqualTo(4);
    });
    assertThat(cluster.netNamespaceIps("outside")).isEmpty();
    assertThat(cluster.netNamespaceIps("thief")).isEmpty();
    assertThat(cluster.egressIps("thief")).isEqualTo("192.0.2.7,198.51.100.11");
  }

  @Test
  void optOutDeletionAndAnnotationRemovalReleaseAddresses() {
    // scenarios 32, 33, 34
    String ipam = cluster.n("rel");
    cluster.node("w1", Map.of("zone", "a"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "a2"));
    cluster.namespace("stay", ipam, null);
    cluster.namespace("leave", ipam, null);
    cluster.namespace("renew", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.egressIps("renew")).isNotNull());
    String leaving = cluster.egressIps("leave");
    String renewing = cluster.egressIps("renew");
    cluster.annotate("leave", EgressAnnotations.EGRESSIPAM, null);
    cluster.annotate("renew", EgressAnnotations.EGRESSIPS, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("leave")).isNull();
      assertThat(cluster.netNamespaceIps("leave")).isEmpty();
      assertThat(cluster.egressIps("renew")).isNotNull().isNotEqualTo(renewing);
      // the address may be reused at once (as the old operator did), but never stays with "leave"
      assertThat(Ledgers.holder(client, Ip.parse(leaving.split(",")[0]))
          .map(ClaimOwner::name)).isNotEqualTo(java.util.Optional.of(cluster.n("leave")));
    });
    String stayIp = cluster.egressIps("stay").split(",")[0];
    client.namespaces().withName(cluster.n("stay")).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("w1")).doesNotContain(stayIp);
      assertThat(Ledgers.holder(client, Ip.parse(stayIp))).isEmpty();
    });
  }

  @Test
  void anExhaustedCidrLeavesOnlyTheLastNamespacePendingUntilAnAddressIsFreed() {
    // scenarios 16, 43, 44: a /29 has 6 usable addresses, all of them handed out
    String ipam = cluster.n("full");
    cluster.node("w1", Map.of("zone", "a"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.8/29", "a"));
    for (int i = 1; i <= 7; i++) {
      cluster.namespace("ns" + i, ipam, null);
    }
    await().atMost(WAIT).untilAsserted(() -> {
      Set<String> got = new HashSet<>();
      for (int i = 1; i <= 6; i++) {
        got.add(cluster.egressIps("ns" + i));
      }
      assertThat(got).containsExactlyInAnyOrder("192.0.2.9", "192.0.2.10", "192.0.2.11", "192.0.2.12",
          "192.0.2.13", "192.0.2.14");
      assertThat(cluster.egressIps("ns7")).isNull();
      assertThat(events("ns7")).anySatisfy(e -> assertThat(e.getMessage()).contains("has no free address"));
      assertThat(ipam(ipam).getStatus()).isNotNull();
      assertThat(ipam(ipam).getStatus().pendingNamespaces()).isEqualTo(1);
    });
    String freed = cluster.egressIps("ns3");
    client.namespaces().withName(cluster.n("ns3")).delete();
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.egressIps("ns7")).isEqualTo(freed));
  }

  @Test
  void anInvalidSpecIsReportedTouchesNothingAndStillDeletes() {
    // scenarios 12, 13, 16 (host bits set)
    String ipam = cluster.n("bad");
    cluster.node("w1", Map.of("zone", "a"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("10.0.0.5/24", "a", "10.1.0.5"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      EgressIPAM x = ipam(ipam);
      assertThat(condition(x, "Ready")).isEqualTo("False");
      assertThat(x.getStatus().conditions()).anySatisfy(c -> {
        assertThat(c.getReason()).isEqualTo("InvalidSpec");
        assertThat(c.getMessage()).contains("did you mean 10.0.0.0/24?").contains("10.1.0.5");
      });
    });
    assertThat(cluster.egressIps("ns1")).isNull();
    assertThat(cluster.netNamespaceIps("ns1")).isEmpty();
    client.resources(EgressIPAM.class).withName(ipam).delete();
    await().atMost(WAIT).until(() -> ipam(ipam) == null);
  }

  @Test
  void deletingTheIpamClearsWhatItWroteButKeepsManualAddresses() {
    // scenario 36
    String ipam = cluster.n("gone");
    cluster.node("w1", Map.of("zone", "a"));
    cluster.node("w2", Map.of("zone", "b"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "b"));
    cluster.namespace("auto", ipam, null);
    cluster.namespace("manual", ipam, "192.0.2.50,198.51.100.50");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("auto")).isNotNull();
      assertThat(cluster.hostSubnetIps("w1")).hasSize(2);
    });
    client.resources(EgressIPAM.class).withName(ipam).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(ipam(ipam)).isNull();
      assertThat(cluster.egressIps("auto")).isNull();
      assertThat(cluster.egressIps("manual")).isEqualTo("192.0.2.50,198.51.100.50");
      assertThat(cluster.netNamespaceIps("auto")).isEmpty();
      assertThat(cluster.netNamespaceIps("manual")).isEmpty();
      assertThat(cluster.hostSubnetIps("w1")).isEmpty();
      assertThat(cluster.hostSubnetIps("w2")).isEmpty();
      assertThat(Ledgers.ofPool(client, "egressipam/" + ipam)).isEmpty();
    });
  }

  @Test
  void nodeLabelDeletionAndZoneChangesMoveAddressesPromptly() {
    // scenarios 29, 30, 31
    String ipam = cluster.n("nodes");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("a2", Map.of("zone", "a"));
    cluster.node("late", Map.of());
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "b"));
    cluster.node("b1", Map.of("zone", "b"));
    cluster.namespace("ns1", ipam, null);
    cluster.namespace("ns2", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("a1")).containsExactly("192.0.2.1");
      assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.2");
    });
    cluster.deleteNode("a1");
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.1", "192.0.2.2"));
    cluster.label("late", "zone", "a"); // a label change alone triggers
    cluster.label("a2", "zone", "b");   // a2 moves to zone b: its zone-a addresses must leave it
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("late")).containsExactly("192.0.2.1", "192.0.2.2");
      assertThat(cluster.hostSubnetIps("a2")).allMatch(ip -> ip.startsWith("198.51.100."));
    });
    assertThat(cluster.hostedAnywhere()).allSatisfy((ip, nodes) -> assertThat(nodes).hasSize(1));
  }

  @Test
  void editingManualAddressesAndMovingToAnotherIpamAreFollowed() {
    // scenarios 22, 35, 45
    String a = cluster.n("ipam-a");
    String b = cluster.n("ipam-b");
    cluster.node("w1", Map.of("zone", "a"));
    cluster.ipam(a, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a"));
    cluster.ipam(b, "zone", WORKERS, null, null, cidr("198.51.100.0/24", "a"));
    cluster.namespace("edit", a, "192.0.2.10");
    cluster.namespace("move", a, null);
    cluster.namespace("typo", "no-such-ipam", null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.netNamespaceIps("edit")).containsExactly("192.0.2.10");
      assertThat(cluster.egressIps("move")).isEqualTo("192.0.2.1");
      assertThat(events("typo")).anySatisfy(e -> assertThat(e.getMessage()).contains("names EgressIPAM 'no-such-ipam', which does not exist"));
    });
    cluster.annotate("edit", EgressAnnotations.EGRESSIPS, "192.0.2.20");
    cluster.annotate("move", EgressAnnotations.EGRESSIPAM, b);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.netNamespaceIps("edit")).containsExactly("192.0.2.20");
      assertThat(cluster.hostSubnetIps("w1")).doesNotContain("192.0.2.10", "192.0.2.1");
      assertThat(cluster.egressIps("move")).isEqualTo("198.51.100.1");
      assertThat(cluster.netNamespaceIps("move")).containsExactly("198.51.100.1");
    });
    // Released once nothing shows them, at the end of the pass that cleared them (or the next one).
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(Ledgers.holder(client, Ip.parse("192.0.2.10"))).isEmpty();
      assertThat(Ledgers.holder(client, Ip.parse("192.0.2.1"))).isEmpty();
    });
  }

  @Test
  void onACloudPlatformOneCidrIsPlacedExplicitlyAndTheMissingCloudModuleIsReported() {
    // Infrastructure says AWS: CIDR mode would let SDN pick a node the cloud does not route to
    var infra = new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
        .withApiVersion("config.openshift.io/v1").withKind("Infrastructure").withNewMetadata().withName("cluster")
        .endMetadata().addToAdditionalProperties("spec", Map.of()).build();
    var infras = client.genericKubernetesResources("config.openshift.io/v1", "Infrastructure");
    infras.resource(infra).create();
    var current = infras.withName("cluster").get();
    current.setAdditionalProperty("status", Map.of("platform", "AWS", "platformStatus", Map.of("type", "AWS")));
    infras.resource(current).updateStatus();
    try {
      String ipam = cluster.n("aws");
      cluster.node("a1", Map.of("zone", "a"));
      cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a"));
      cluster.namespace("ns1", ipam, null);
      await().atMost(WAIT).untilAsserted(() -> {
        assertThat(cluster.hostSubnetIps("a1")).containsExactly("192.0.2.1");
        assertThat(cluster.hostSubnetCidrs("a1")).isEmpty();
        EgressIPAM x = ipam(ipam);
        assertThat(x.getStatus()).isNotNull();
        assertThat(x.getStatus().platform()).isEqualTo("AWS");
        assertThat(condition(x, "Ready")).isEqualTo("False");
        assertThat(x.getStatus().conditions()).anySatisfy(c -> assertThat(c.getMessage()).contains("needs its cloud module"));
      });
    } finally {
      infras.withName("cluster").delete();
    }
  }

  @Test
  void aReadinessEventWithNothingToChangeWritesNoNetNamespaceOrNamespace() throws Exception {
    // scenario 50, at 60 namespaces: no-op detection, counted by the API server itself
    String ipam = cluster.n("noop");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("idle", Map.of("zone", "elsewhere"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "b"));
    cluster.node("b1", Map.of("zone", "b"));
    for (int i = 0; i < 60; i++) {
      cluster.namespace("ns" + i, ipam, null);
    }
    await().atMost(WAIT).untilAsserted(() -> {
      for (int i = 0; i < 60; i++) {
        assertThat(cluster.netNamespaceIps("ns" + i)).hasSize(2);
      }
    });
    Thread.sleep(3000); // let the last reconciles settle
    double netnsBefore = writes("netnamespaces");
    double nsBefore = writes("namespaces");
    double claimsBefore = writes("ipclaims") + writes("ipblocks");
    cluster.setReady("idle", false);
    cluster.setReady("idle", true);
    Thread.sleep(5000);
    assertThat(writes("netnamespaces")).isEqualTo(netnsBefore);
    assertThat(writes("namespaces")).isEqualTo(nsBefore);
    assertThat(writes("ipclaims") + writes("ipblocks")).isEqualTo(claimsBefore);
  }

  @Test
  void handEditsOfHostSubnetsAndNetNamespacesAreRepairedAtOnce() {
    // scenario 48: watched, so no need to wait for the periodic resync
    String ipam = cluster.n("drift");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "b"));
    cluster.node("b1", Map.of("zone", "b"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("a1")).containsExactly("192.0.2.1");
      assertThat(cluster.netNamespaceIps("ns1")).hasSize(2);
    });
    var hostSubnets = client.resources(io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet.class);
    hostSubnets.withName(cluster.n("a1")).edit(h -> {
      h.setEgressIPs(List.of("203.0.113.99")); // ours removed, a foreign one added
      return h;
    });
    client.resources(io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace.class)
        .withName(cluster.n("ns1")).edit(n -> {
          n.setEgressIPs(List.of());
          return n;
        });
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("a1")).containsExactlyInAnyOrder("192.0.2.1", "203.0.113.99");
      assertThat(cluster.netNamespaceIps("ns1")).containsExactly("192.0.2.1", "198.51.100.1");
    });
  }

  /** Write requests the API server has served for a resource, from its own metrics. */
  private double writes(String resource) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile(
        "^apiserver_request_total\\{([^}]*)\\} ([0-9.e+]+)$", java.util.regex.Pattern.MULTILINE)
        .matcher(client.raw("/metrics"));
    double total = 0;
    while (m.find()) {
      String labels = m.group(1);
      if (labels.contains("resource=\"" + resource + "\"") && !labels.contains("subresource=\"status\"")
          && labels.matches(".*verb=\"(POST|PUT|PATCH|DELETE|APPLY)\".*")) {
        total += Double.parseDouble(m.group(2));
      }
    }
    return total;
  }
}
