package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.egressip.EgressIPAMReconciler;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.network.NetworkWrite;
import org.ipamoperators.egressip.network.SdnWriter;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The review's findings on controller-egressip (H5, M4, M7, M9), each against a real API server:
 * Node heartbeats start no pass, a HostSubnet write never drops another IPAM's addresses from a
 * stale view, a malformed claim cannot hold up an IPAM's deletion, a bad capacity annotation is
 * reported on the node and in the IPAM's status.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.INFRASTRUCTURE})
class EgressReviewFixesIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final Map<String, String> WORKERS = Map.of("node-role.kubernetes.io/worker", "");
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private Operator operator;
  private EgressCluster cluster;
  private KubernetesClient client;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client, TestInfo info) {
    this.client = client;
    cluster = new EgressCluster(client, EgressCluster.prefix(info), true);
    KubernetesClient c = server.newClient();
    operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
    operator.register(new EgressIPAMReconciler(c, Clock.systemUTC(), registry));
    operator.start();
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  private double passes(String ipam) {
    Counter c = registry.find("ipam_egressip_reconciles").tag("egressipam", ipam).counter();
    return c == null ? 0 : c.count();
  }

  private double settledPasses(String ipam) throws InterruptedException {
    double before;
    double now = passes(ipam);
    do {
      before = now;
      Thread.sleep(1500);
      now = passes(ipam);
    } while (now != before);
    return now;
  }

  private void heartbeat(String node) {
    Node n = client.nodes().withName(cluster.n(node)).get();
    n.getStatus().getConditions().forEach(c -> c.setLastHeartbeatTime(Instant.now().toString()));
    client.nodes().resource(n).updateStatus();
  }

  @Test
  void nodeHeartbeatsStartNoPassWhileARealNodeChangeDoes() throws Exception {
    // H5: every Node update used to map to a pass of every IPAM (on AWS, EC2 describes each time).
    String ipam = cluster.n("hb");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.hostSubnetIps("a1")).hasSize(2));
    double settled = settledPasses(ipam);
    for (int i = 0; i < 10; i++) {
      heartbeat("a1");
      Thread.sleep(200);
    }
    Thread.sleep(2000);
    double afterHeartbeats = passes(ipam);
    assertThat(afterHeartbeats).as("passes after 10 heartbeats").isLessThanOrEqualTo(settled + 1);
    cluster.label("a1", "rack", "r1"); // a change the policy reads (labels) does start one
    await().atMost(WAIT).untilAsserted(() -> assertThat(passes(ipam)).isGreaterThan(afterHeartbeats));
  }

  @Test
  void aHostSubnetWriteFromAStaleViewKeepsTheAddressesAnotherIpamWroteMeanwhile() {
    // M7: IPAM "b" wrote 198.51.100.5 after IPAM "a" read the HostSubnet; a's write must keep it.
    cluster.node("a1", Map.of("zone", "a"));
    String node = cluster.n("a1");
    HostSubnet stale = client.resources(HostSubnet.class).withName(node).get();
    client.resources(HostSubnet.class).withName(node).edit(h -> {
      h.setEgressIPs(List.of("198.51.100.5"));
      return h;
    });
    List<HostSubnet> written = new ArrayList<>();
    SdnWriter writer = new SdnWriter(client, ns -> null, () -> List.of(stale), o -> written.add((HostSubnet) o));
    NetworkWrite w = new NetworkWrite("a", List.of(IpRange.parse("192.0.2.0/24")), Map.of(), Set.of(),
        Map.of(node, Set.of(Ip.parse("192.0.2.1"))), Map.of(), Set.of(node));
    assertThat(writer.apply(w)).isEmpty();
    assertThat(cluster.hostSubnetIps("a1")).containsExactlyInAnyOrder("192.0.2.1", "198.51.100.5");
    assertThat(written).singleElement().satisfies(h -> assertThat(h.getEgressIPs())
        .containsExactlyInAnyOrder("192.0.2.1", "198.51.100.5"));
  }

  @Test
  void anAddressLeavesAHostSubnetDeletedUnderAStaleViewAndMovesInTheSamePass() {
    // A node and its HostSubnet deleted while the informer still shows them: the removal meets a 404, which
    // means the HostSubnet shows nothing any more, so the address moves at once rather than waiting as stuck.
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("a2", Map.of("zone", "a"));
    String a1 = cluster.n("a1");
    String a2 = cluster.n("a2");
    HostSubnet hosting = client.resources(HostSubnet.class).withName(a1).edit(h -> {
      h.setEgressIPs(List.of("192.0.2.1"));
      return h;
    });
    HostSubnet other = client.resources(HostSubnet.class).withName(a2).get();
    cluster.deleteNode("a1");
    List<HostSubnet> gone = new ArrayList<>();
    SdnWriter writer = new SdnWriter(client, ns -> null, () -> List.of(hosting, other), o -> {}, gone::add,
        Runnable::run);
    NetworkWrite w = new NetworkWrite("a", List.of(IpRange.parse("192.0.2.0/24")), Map.of(), Set.of(),
        Map.of(a2, Set.of(Ip.parse("192.0.2.1"))), Map.of(), Set.of(a2));
    assertThat(writer.apply(w)).isEmpty();
    assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.1");
    assertThat(gone).singleElement().satisfies(h -> assertThat(h.getMetadata().getName()).isEqualTo(a1));
  }

  @Test
  void writesGoingOutSideBySideEachKeepWhatOthersWroteAndReportTheirOwnFailure() throws Exception {
    // The network step writes NetNamespaces (then HostSubnets) side by side: each write is still conditioned on
    // the view it was computed from, so another writer's entries survive, and one object's failure is its own.
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("a2", Map.of("zone", "a"));
    int count = 40;
    Map<String, List<Ip>> wanted = new java.util.TreeMap<>();
    Map<String, NetNamespace> seen = new java.util.HashMap<>();
    for (int i = 0; i < count; i++) {
      cluster.namespace("par" + i, "p", null);
      String ns = cluster.n("par" + i);
      wanted.put(ns, List.of(Ip.parse("192.0.2." + (i + 1))));
      seen.put(ns, client.resources(NetNamespace.class).withName(ns).get());
    }
    for (int i = 0; i < count; i += 2) { // after the writer's view was taken: its writes meet a 409 and read again
      String foreign = "198.51.100." + (i + 1);
      client.resources(NetNamespace.class).withName(cluster.n("par" + i)).edit(x -> {
        x.setEgressIPs(List.of(foreign));
        return x;
      });
    }
    String missing = cluster.n("par-missing"); // no NetNamespace: reported, the others written all the same
    wanted.put(missing, List.of(Ip.parse("192.0.2.200")));
    Map<String, Set<Ip>> hosting = Map.of(cluster.n("a1"), new java.util.TreeSet<>(wanted.entrySet().stream()
        .filter(e -> !e.getKey().equals(missing)).limit(20).map(e -> e.getValue().get(0)).toList()),
        cluster.n("a2"), new java.util.TreeSet<>(wanted.entrySet().stream()
        .filter(e -> !e.getKey().equals(missing)).skip(20).map(e -> e.getValue().get(0)).toList()));
    List<HostSubnet> subnets = List.of(client.resources(HostSubnet.class).withName(cluster.n("a1")).get(),
        client.resources(HostSubnet.class).withName(cluster.n("a2")).get());
    List<Object> written = java.util.Collections.synchronizedList(new ArrayList<>());
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
    try {
      SdnWriter writer = new SdnWriter(client, seen::get, () -> subnets, written::add, pool);
      List<String> failures = writer.apply(new NetworkWrite("p", List.of(IpRange.parse("192.0.2.0/24")), wanted,
          Set.of(), hosting, Map.of(), hosting.keySet()));
      assertThat(failures).singleElement().asString().contains(missing).contains("does not exist");
    } finally {
      pool.shutdown();
    }
    for (int i = 0; i < count; i++) {
      List<String> expected = new ArrayList<>(List.of("192.0.2." + (i + 1)));
      if (i % 2 == 0) {
        expected.add("198.51.100." + (i + 1));
      }
      assertThat(cluster.netNamespaceIps("par" + i)).as("par" + i).containsExactlyInAnyOrderElementsOf(expected);
    }
    assertThat(cluster.hostSubnetIps("a1")).hasSize(20);
    assertThat(cluster.hostSubnetIps("a2")).hasSize(20);
    assertThat(written).as("every object written, told once each").hasSize(count + 2);
  }

  @Test
  void aMalformedClaimInTheIpamsPoolDoesNotHoldUpItsDeletion() {
    // M4: cleanup parsed every claim of the pool unguarded; one bad claim kept the finalizer forever.
    String ipam = cluster.n("del");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.0/24", "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.egressIps("ns1")).isEqualTo("192.0.2.1"));
    String pool = "egressipam/" + ipam;
    String bogus = cluster.n("bogus-claim");
    client.resource(IPClaim.of(bogus, new IPClaimSpec("1:2:3", pool,
        new ClaimOwner("egressip", "Namespace", null, "by-hand", null)),
        Map.of(ClusterLedger.LABEL_POOL, ClaimNames.labelValue(pool), ClusterLedger.LABEL_CONTROLLER, "egressip")))
        .create();
    try {
      client.resources(EgressIPAM.class).withName(ipam).delete();
      await().atMost(WAIT).untilAsserted(() -> {
        assertThat(client.resources(EgressIPAM.class).withName(ipam).get()).isNull();
        assertThat(Ledgers.holder(client, Ip.parse("192.0.2.1"))).isEmpty();
        assertThat(cluster.egressIps("ns1")).isNull();
      });
      assertThat(client.resources(IPClaim.class).withName(bogus).get()).as("left in place, reported").isNotNull();
    } finally {
      client.resources(IPClaim.class).withName(bogus).delete();
    }
  }

  @Test
  void anUnusableCapacityAnnotationIsAnEventOnTheNodeAndAConditionOnTheIpam() {
    // M9: a bad egress-capacity annotation fell back to the IPAM's capacity, reported nowhere.
    String ipam = cluster.n("cap");
    cluster.node("a1", Map.of("zone", "a"));
    client.nodes().withName(cluster.n("a1")).edit(n -> {
      n.getMetadata().setAnnotations(new java.util.HashMap<>(Map.of(EgressAnnotations.NODE_CAPACITY, "lots")));
      return n;
    });
    cluster.ipam(ipam, "zone", WORKERS, 3, null, cidr("192.0.2.0/24", "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isEqualTo("192.0.2.1"); // served all the same, with capacity 3
      EgressIPAM x = client.resources(EgressIPAM.class).withName(ipam).get();
      assertThat(EgressCluster.condition(x, "Degraded")).isEqualTo("True");
      assertThat(x.getStatus().conditions()).anySatisfy(c -> {
        assertThat(c.getType()).isEqualTo("Degraded");
        assertThat(c.getReason()).isEqualTo("InvalidNodeCapacity");
        assertThat(c.getMessage()).contains(cluster.n("a1")).contains("'lots'");
      });
      List<Event> events = client.v1().events().inNamespace("default").list().getItems();
      assertThat(events).anySatisfy(e -> {
        assertThat(e.getInvolvedObject().getName()).isEqualTo(cluster.n("a1"));
        assertThat(e.getReason()).isEqualTo("InvalidEgressCapacity");
      });
    });
    // Fixed: the condition clears.
    client.nodes().withName(cluster.n("a1")).edit(n -> {
      n.getMetadata().getAnnotations().put(EgressAnnotations.NODE_CAPACITY, "5");
      return n;
    });
    await().atMost(WAIT).untilAsserted(() -> assertThat(EgressCluster.condition(
        client.resources(EgressIPAM.class).withName(ipam).get(), "Degraded")).isEqualTo("False"));
  }
}
