package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import org.ipamoperators.egressip.api.EgressAnnotations;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.EgressIPAMReconciler;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * More of the reference's acceptance scenarios (section 7) on OpenShift SDN, against a real API
 * server: flapping nodes, nodes joining, capacity and its metrics, address reuse and admission. Addresses are data only (documentation ranges); nothing carries traffic.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.INFRASTRUCTURE})
class MoreEgressScenariosIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final Map<String, String> WORKERS = Map.of("node-role.kubernetes.io/worker", "");
  private Operator operator;
  private EgressCluster cluster;
  private KubernetesClient client;
  private KubeApiServer server;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client, TestInfo info) {
    this.server = server;
    this.client = client;
    cluster = new EgressCluster(client, EgressCluster.prefix(info), true);
  }

  @AfterEach
  void stop() {
    if (operator != null) {
      operator.stop();
    }
    cluster.close();
  }

  private void startOperator() {
    operator = SdnEgressIT.startOperator(server);
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

  /**
   * Polls every HostSubnet of the test and counts, per egress IP, how often the node hosting it
   * changes (a moment where the IP is on no node is not a move; coming back to another node is).
   */
  private final class MoveSampler implements AutoCloseable {
    private final Map<String, List<String>> lastHost = new ConcurrentHashMap<>();
    private final Map<String, Integer> moves = new ConcurrentHashMap<>();
    private final Map<String, List<List<String>>> history = new ConcurrentHashMap<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread thread;

    MoveSampler() {
      Map<String, List<String>> initial = cluster.hostedAnywhere();
      initial.forEach(this::record);
      thread = new Thread(() -> {
        while (running.get()) {
          try {
            cluster.hostedAnywhere().forEach(this::record);
            Thread.sleep(100);
          } catch (InterruptedException e) {
            return;
          } catch (RuntimeException e) {
            // a transient API error: the next sample sees the state
          }
        }
      }, "move-sampler");
      thread.setDaemon(true);
      thread.start();
    }

    private void record(String ip, List<String> nodes) {
      List<String> sorted = new ArrayList<>(nodes);
      sorted.sort(null);
      List<String> previous = lastHost.put(ip, sorted);
      if (previous != null && !previous.equals(sorted)) {
        moves.merge(ip, 1, Integer::sum);
      }
      if (previous == null || !previous.equals(sorted)) {
        history.computeIfAbsent(ip, k -> new ArrayList<>()).add(sorted);
      }
    }

    int moves(String ip) {
      return moves.getOrDefault(ip, 0);
    }

    Map<String, List<List<String>>> history() {
      return new HashMap<>(history);
    }

    @Override
    public void close() throws InterruptedException {
      running.set(false);
      thread.interrupt();
      thread.join(5000);
    }
  }

  /**
   * Nodes a1, a2 (zone a) and b1 (zone b), an IPAM with a CIDR per zone and the given failover grace,
   * and two namespaces, whose zone-a addresses land on a1 and a2.
   */
  private String twoZonesWithTwoNamespaces(String name, int graceSeconds) {
    String ipam = cluster.n(name);
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("a2", Map.of("zone", "a"));
    cluster.node("b1", Map.of("zone", "b"));
    cluster.ipam(ipam, "zone", WORKERS, null, graceSeconds, cidr("192.0.2.0/24", "a"),
        cidr("198.51.100.0/24", "b"));
    cluster.namespace("ns1", ipam, null);
    cluster.namespace("ns2", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("a1")).containsExactly("192.0.2.1");
      assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.2");
    });
    return ipam;
  }

  @Test
  void aNodeFlappingThreeTimesMovesItsAddressesAtMostOnce() throws Exception {
    // scenario 27: grace 2 s; each NotReady spell (3 s or more) outlasts it, and all three flaps
    // fit in well under a minute. No new namespace arrives meanwhile: only a1's own address may move.
    startOperator();
    String ipam = twoZonesWithTwoNamespaces("flap", 2);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("b1")).containsExactly("198.51.100.1", "198.51.100.2");
    });
    MoveSampler sampler = new MoveSampler();
    try {
      for (int flap = 1; flap <= 3; flap++) {
        cluster.setReady("a1", false);
        if (flap == 1) {
          await().atMost(WAIT).untilAsserted(
              () -> assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.1", "192.0.2.2"));
        } else {
          Thread.sleep(3000);
        }
        cluster.setReady("a1", true);
        Thread.sleep(1500);
      }
      Thread.sleep(2500); // past one more grace period and reschedule
    } finally {
      sampler.close();
    }
    Map<String, List<List<String>>> history = sampler.history();
    assertThat(sampler.moves("192.0.2.1")).as("moves of 192.0.2.1: %s", history).isEqualTo(1);
    assertThat(sampler.moves("192.0.2.2")).as("moves of 192.0.2.2: %s", history).isZero();
    assertThat(sampler.moves("198.51.100.1")).isZero();
    assertThat(sampler.moves("198.51.100.2")).isZero();
    assertThat(cluster.hostSubnetIps("a1")).isEmpty();
    assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.1", "192.0.2.2");
    assertThat(cluster.egressIps("ns1")).isEqualTo("192.0.2.1,198.51.100.1");
    assertThat(cluster.hostedAnywhere()).allSatisfy((ip, nodes) -> assertThat(nodes).hasSize(1));
  }

  @Test
  void twoIpamsShareANodesCapacity() {
    startOperator();
    String first = cluster.n("cap-a");
    String second = cluster.n("cap-b"); // named after the first: it yields the shared capacity
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("a2", Map.of("zone", "a"));
    cluster.node("b1", Map.of("zone", "b"));
    for (String node : List.of("a1", "a2")) {
      client.nodes().withName(cluster.n(node)).edit(n -> {
        n.getMetadata().setAnnotations(new java.util.HashMap<>(n.getMetadata().getAnnotations() == null
            ? Map.of() : n.getMetadata().getAnnotations()));
        n.getMetadata().getAnnotations().put(EgressAnnotations.NODE_CAPACITY, "1");
        return n;
      });
    }
    cluster.ipam(first, "zone", WORKERS, null, null, cidr("192.0.2.0/25", "a"), cidr("192.0.2.128/25", "b"));
    cluster.namespace("ns1", first, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.hostSubnetIps("a1")).containsExactly("192.0.2.1"));

    // The second IPAM would take a1 too (empty for it, first by name) if it did not count the first's address.
    cluster.ipam(second, "zone", WORKERS, null, null, cidr("198.51.100.0/25", "a"), cidr("198.51.100.128/25", "b"));
    cluster.namespace("ns2", second, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns2")).isEqualTo("198.51.100.1,198.51.100.129");
      assertThat(cluster.hostSubnetIps("a2")).containsExactly("198.51.100.1");
      assertThat(cluster.hostSubnetIps("a1")).containsExactly("192.0.2.1");
    });
    // Both nodes of zone a are full: a third address there is allocated but not placed.
    cluster.namespace("ns3", second, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns3")).isEqualTo("198.51.100.2,198.51.100.130");
      assertThat(ipam(second).getStatus().unplaceableIPs()).isEqualTo(1);
    });
    assertThat(cluster.hostSubnetIps("a1")).containsExactly("192.0.2.1");
  }

  @Test
  void aJoiningNodeMovesNothingAndTakesTheNextNewAddress() throws Exception {
    // scenario 28
    startOperator();
    String ipam = cluster.n("join");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("a2", Map.of("zone", "a"));
    cluster.node("b1", Map.of("zone", "b"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "b"));
    for (int i = 1; i <= 3; i++) {
      cluster.namespace("ns" + i, ipam, null);
    }
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostedAnywhere()).hasSize(6);
      assertThat(cluster.hostSubnetIps("a1").size() + cluster.hostSubnetIps("a2").size()).isEqualTo(3);
    });
    Map<String, List<String>> before = cluster.hostedAnywhere();
    MoveSampler sampler = new MoveSampler();
    try {
      cluster.node("a3", Map.of("zone", "a")); // Ready, with its HostSubnet
      Thread.sleep(2000); // the join is reconciled
      assertThat(cluster.hostedAnywhere()).isEqualTo(before);
      cluster.namespace("ns4", ipam, null);
      await().atMost(WAIT).untilAsserted(() -> {
        assertThat(cluster.egressIps("ns4")).isEqualTo("192.0.2.4,198.51.100.4");
        assertThat(cluster.hostSubnetIps("a3")).containsExactly("192.0.2.4");
      });
    } finally {
      sampler.close();
    }
    Map<String, List<String>> after = cluster.hostedAnywhere();
    before.forEach((ip, nodes) -> assertThat(after.get(ip)).as(ip).isEqualTo(nodes));
    before.keySet().forEach(ip -> assertThat(sampler.moves(ip)).as("moves of %s: %s", ip, sampler.history()).isZero());
    assertThat(after).allSatisfy((ip, nodes) -> assertThat(nodes).hasSize(1));
  }

  @Test
  void aFullNodeLeavesTheAddressAllocatedButUnplacedAndTheMetricsFollowNodesAndIpams() {
    // scenarios 40 and 41, with a registry of our own to read the gauges from
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    KubernetesClient c = server.newClient();
    operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
    operator.register(new EgressIPAMReconciler(c, Clock.systemUTC(), registry));
    operator.start();

    String full = cluster.n("cap");
    String unlimited = cluster.n("unl");
    String a1 = cluster.n("a1");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.ipam(full, "zone", WORKERS, 1, null, cidr("192.0.2.0/24", "a"));
    cluster.namespace("ns1", full, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.egressIps("ns1")).isEqualTo("192.0.2.1"));
    cluster.namespace("ns2", full, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns2")).isEqualTo("192.0.2.2"); // allocated all the same
      EgressIPAM x = ipam(full);
      assertThat(x.getStatus()).isNotNull();
      assertThat(x.getStatus().unplaceableIPs()).isEqualTo(1);
      assertThat(x.getStatus().assignedNamespaces()).isEqualTo(2);
      assertThat(condition(x, "Degraded")).isEqualTo("True");
      assertThat(events("ns2")).anySatisfy(e -> {
        assertThat(e.getType()).isEqualTo("Warning");
        assertThat(e.getReason()).isEqualTo("EgressIPUnplaceable");
      });
      assertThat(gauge(registry, "ipam_egressip_ip_capacity", full, a1)).isEqualTo(2.0);
      assertThat(gauge(registry, "ipam_egressip_ip_allocated", full, a1)).isEqualTo(2.0);
      assertThat(gauge(registry, "egressip_ip_capacity", full, a1)).as("the old operator's name").isEqualTo(2.0);
      assertThat(gauge(registry, "egressip_ip_allocated", full, a1)).as("the old operator's name").isEqualTo(2.0);
      assertThat(registry.find("ipam_egressip_unplaceable_ips").tag("egressipam", full).gauge())
          .isNotNull().extracting(Gauge::value).isEqualTo(1.0);
    });
    assertThat(events("ns1")).noneSatisfy(e -> assertThat(e.getReason()).isEqualTo("EgressIPUnplaceable"));

    // the same node under an IPAM without a capacity: unlimited, never a utilisation alert
    cluster.ipam(unlimited, "zone", WORKERS, null, null, cidr("198.51.100.0/24", "a"));
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(gauge(registry, "ipam_egressip_ip_capacity", unlimited, a1)).isEqualTo(Double.POSITIVE_INFINITY);
      assertThat(gauge(registry, "ipam_egressip_ip_allocated", unlimited, a1)).isEqualTo(1.0);
    });

    cluster.deleteNode("a1");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(registry.find("ipam_egressip_ip_capacity").tag("node", a1).gauges()).isEmpty();
      assertThat(registry.find("ipam_egressip_ip_allocated").tag("node", a1).gauges()).isEmpty();
      assertThat(registry.find("egressip_ip_capacity").tag("node", a1).gauges()).isEmpty();
      assertThat(registry.find("egressip_ip_allocated").tag("node", a1).gauges()).isEmpty();
      assertThat(registry.find("ipam_egressip_cidr_capacity").tag("egressipam", full).gauges()).isNotEmpty();
    });

    client.resources(EgressIPAM.class).withName(full).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(ipam(full)).isNull();
      assertThat(registry.getMeters()).noneMatch(m -> full.equals(m.getId().getTag("egressipam")));
      assertThat(registry.find("ipam_egressip_cidr_capacity").tag("egressipam", unlimited).gauges()).isNotEmpty();
    });
    client.resources(EgressIPAM.class).withName(unlimited).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(ipam(unlimited)).isNull();
      assertThat(registry.getMeters()).noneMatch(m -> unlimited.equals(m.getId().getTag("egressipam")));
    });
  }

  private static Double gauge(SimpleMeterRegistry registry, String name, String ipam, String node) {
    Gauge g = registry.find(name).tag("egressipam", ipam).tag("node", node).gauge();
    return g == null ? null : g.value();
  }

  @Test
  void aDeletedNamespacesAddressGoesToTheNextNewNamespace() {
    // scenario 4
    startOperator();
    String ipam = cluster.n("reuse");
    cluster.node("w1", Map.of("zone", "a"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.egressIps("ns1")).isEqualTo("192.0.2.1"));
    cluster.namespace("ns2", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.egressIps("ns2")).isEqualTo("192.0.2.2"));
    client.namespaces().withName(cluster.n("ns1")).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(Ledgers.holder(client, Ip.parse("192.0.2.1"))).isEmpty();
      assertThat(cluster.netNamespaceIps("ns1")).isEmpty();
    });
    cluster.namespace("ns3", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns3")).isEqualTo("192.0.2.1");
      assertThat(cluster.netNamespaceIps("ns3")).containsExactly("192.0.2.1");
    });
    assertThat(cluster.egressIps("ns2")).isEqualTo("192.0.2.2");
    assertThat(Ledgers.holder(client, Ip.parse("192.0.2.1")))
        .map(ClaimOwner::name).contains(cluster.n("ns3"));
  }

  @Test
  void duplicateCidrsAreRejectedAtAdmissionAndASharedLabelValueIsAcceptedAsTheOldCrdDid() {
    // scenario 14: the CRD's CEL rule, enforced by the API server
    assertThatThrownBy(() -> cluster.ipam(cluster.n("dupcidr"), "zone", WORKERS, null, null,
        cidr("192.0.2.0/24", "a"), cidr("192.0.2.0/24", "b")))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getMessage()).contains("each CIDR may appear only once in cidrAssignments");
        });
    assertThat(ipam(cluster.n("dupcidr"))).isNull();
    // Issue 13 item 9: the old CRD accepted two CIDRs with one labelValue; such a manifest still
    // applies, and the nodes of that value host the addresses of both.
    startOperator();
    cluster.node("a1", Map.of("zone", "a"));
    cluster.ipam(cluster.n("duplabel"), "zone", WORKERS, null, null,
        cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "a"));
    cluster.namespace("ns1", cluster.n("duplabel"), null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isEqualTo("192.0.2.1,198.51.100.1");
      assertThat(cluster.hostSubnetIps("a1")).containsExactlyInAnyOrder("192.0.2.1", "198.51.100.1");
      assertThat(condition(ipam(cluster.n("duplabel")), "Ready")).isEqualTo("True");
    });
  }

  @Test
  void zeroPaddedAddressesAreRefusedAtAdmission() {
    // A lenient reader takes 010 as octal 8: 192.168.010.0/24 would become 192.168.8.0/24.
    assertThatThrownBy(() -> cluster.ipam(cluster.n("padded"), "zone", WORKERS, null, null,
        cidr("192.168.010.0/24", "a")))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
    assertThatThrownBy(() -> cluster.ipam(cluster.n("padded"), "zone", WORKERS, null, null,
        cidr("192.168.10.0/24", "a", "192.168.10.07")))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
    assertThat(ipam(cluster.n("padded"))).isNull();
  }

  @Test
  void aFlappingNodeTakesNoNewAddressInItsRecoveryWindowSoItsAddressesMoveAtMostOnce() throws Exception {
    // scenario 27 with a namespace created between two flaps: docs/egressip.md says a recovered
    // node stays ineligible for 60 s, so the new address must not land on a1 and move again
    startOperator();
    String ipam = twoZonesWithTwoNamespaces("rec", 2);
    MoveSampler sampler = new MoveSampler();
    try {
      cluster.setReady("a1", false);
      await().atMost(WAIT).untilAsserted(
          () -> assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.1", "192.0.2.2"));
      cluster.setReady("a1", true);
      Thread.sleep(1000);
      cluster.namespace("ns3", ipam, null);
      await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.hostedAnywhere()).containsKey("192.0.2.3"));
      cluster.setReady("a1", false);
      Thread.sleep(3500);
      cluster.setReady("a1", true);
      Thread.sleep(1500);
    } finally {
      sampler.close();
    }
    int movedOffA1 = 0;
    for (var e : sampler.history().entrySet()) {
      List<List<String>> h = e.getValue();
      for (int i = 1; i < h.size(); i++) {
        if (h.get(i - 1).contains(cluster.n("a1")) && !h.get(i).contains(cluster.n("a1"))) {
          movedOffA1++;
        }
      }
    }
    assertThat(movedOffA1).as("moves off a1: %s", sampler.history()).isLessThanOrEqualTo(1);
  }

  @Test
  void withinTheGraceANotReadyNodeKeepsItsAddressesAndTakesNoNewOnes() throws Exception {
    startOperator();
    String ipam = twoZonesWithTwoNamespaces("grace", 5);
    cluster.setReady("a1", false);
    cluster.namespace("ns3", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.hostSubnetIps("a2")).contains("192.0.2.3"));
    assertThat(cluster.hostSubnetIps("a1")).as("kept within the grace").containsExactly("192.0.2.1");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("a1")).isEmpty();
      assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.1", "192.0.2.2", "192.0.2.3");
    });
  }
}
