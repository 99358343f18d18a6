package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.EgressIPAMReconciler;
import org.ipamoperators.egressip.NamespaceReferenceReconciler;
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
 * server: flapping nodes, nodes joining, capacity and its metrics, address reuse, admission and
 * drift repair. Addresses are data only (documentation ranges); nothing carries traffic.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.INFRASTRUCTURE})
class RecoveringNodeIT {
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
    String prefix = info.getTestMethod().orElseThrow().getName().replaceAll("[A-Z]", "").toLowerCase();
    prefix = (prefix.length() > 12 ? prefix.substring(0, 12) : prefix) + Integer.toHexString(info.getDisplayName().hashCode() & 0xfff);
    cluster = new EgressCluster(client, prefix, true);
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
    if (ipam == null || ipam.getStatus() == null || ipam.getStatus().conditions() == null) {
      return null;
    }
    return ipam.getStatus().conditions().stream().filter(c -> type.equals(c.getType()))
        .map(Condition::getStatus).findFirst().orElse(null);
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

  @Test
  void aFlappingNodeTakesNoNewAddressInItsRecoveryWindowSoItsAddressesMoveAtMostOnce() throws Exception {
    // scenario 27 with a namespace created between two flaps: docs/egressip.md says a recovered
    // node stays ineligible for 60 s, so the new address must not land on a1 and move again
    startOperator();
    String ipam = cluster.n("rec");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("a2", Map.of("zone", "a"));
    cluster.node("b1", Map.of("zone", "b"));
    cluster.ipam(ipam, "zone", WORKERS, null, 2, cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "b"));
    cluster.namespace("ns1", ipam, null);
    cluster.namespace("ns2", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("a1")).containsExactly("192.0.2.1");
      assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.2");
    });
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
    String ipam = cluster.n("grace");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("a2", Map.of("zone", "a"));
    cluster.node("b1", Map.of("zone", "b"));
    cluster.ipam(ipam, "zone", WORKERS, null, 5, cidr("192.0.2.0/24", "a"), cidr("198.51.100.0/24", "b"));
    cluster.namespace("ns1", ipam, null);
    cluster.namespace("ns2", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.hostSubnetIps("a1")).containsExactly("192.0.2.1");
      assertThat(cluster.hostSubnetIps("a2")).containsExactly("192.0.2.2");
    });
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
