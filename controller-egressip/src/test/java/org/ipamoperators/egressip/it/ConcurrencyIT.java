package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Bursts, two replicas at once, and a restart in the middle of a burst: every namespace ends with
 * its own address, each address has exactly one claim (its namespace's), and no address that was
 * published ever changes.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"})
class ConcurrencyIT {
  private static final Duration WAIT = Duration.ofSeconds(120);
  private final List<Operator> operators = new ArrayList<>();
  private EgressCluster cluster;
  private KubernetesClient client;
  private KubeApiServer server;

  @BeforeEach
  void setUp(KubeApiServer server, KubernetesClient client, TestInfo info) {
    this.server = server;
    this.client = client;
    cluster = new EgressCluster(client, "c" + Integer.toHexString(info.getDisplayName().hashCode() & 0xffff), false);
    cluster.node("w1", Map.of("zone", "a"));
  }

  @AfterEach
  void tearDown() {
    operators.forEach(Operator::stop);
    cluster.close();
  }

  private Operator start() {
    Operator op = SdnEgressIT.startOperator(server);
    operators.add(op);
    return op;
  }

  private void burst(String ipam, int from, int to) throws InterruptedException {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    for (int i = from; i < to; i++) {
      int n = i;
      pool.submit(() -> cluster.namespace("ns" + n, ipam, null));
    }
    pool.shutdown();
    assertThat(pool.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
  }

  private Map<String, String> assigned(int count) {
    Map<String, String> out = new HashMap<>();
    for (int i = 0; i < count; i++) {
      String v = cluster.egressIps("ns" + i);
      if (v != null) {
        out.put("ns" + i, v);
      }
    }
    return out;
  }

  /** Every namespace has one address, no two share one, and the ledger agrees with the annotations. */
  private void assertConsistent(String ipam, int count) {
    Map<String, String> got = assigned(count);
    assertThat(got).hasSize(count);
    assertThat(new java.util.HashSet<>(got.values())).hasSize(count);
    Map<Ip, String> claims = Ledgers.ofPool(client, "egressipam/" + ipam);
    got.forEach((ns, ip) -> assertThat(claims.get(Ip.parse(ip))).as("claim of %s", ip).isEqualTo(cluster.n(ns)));
    assertThat(claims).hasSize(count);
  }

  @Test
  void twoHundredNamespacesInOneBurstGetTwoHundredDistinctAddresses() throws Exception {
    String ipam = cluster.n("burst");
    start();
    cluster.ipam(ipam, "zone", null, null, null, cidr("192.0.2.0/24", "a"));
    burst(ipam, 0, 200);
    await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> assertThat(assigned(200)).hasSize(200));
    await().atMost(WAIT).untilAsserted(() -> assertConsistent(ipam, 200));
  }

  @Test
  void twoInstancesAtOnceNeverHandOutTheSameAddress() throws Exception {
    String ipam = cluster.n("twins");
    start();
    start();
    cluster.ipam(ipam, "zone", null, null, null, cidr("198.51.100.0/24", "a"));
    burst(ipam, 0, 120);
    await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> assertThat(assigned(120)).hasSize(120));
    await().atMost(WAIT).untilAsserted(() -> assertConsistent(ipam, 120));
  }

  @Test
  void killedInTheMiddleOfABurstAndRestartedNothingPublishedChanges() throws Exception {
    String ipam = cluster.n("restart");
    Operator first = start();
    cluster.ipam(ipam, "zone", null, null, null, cidr("203.0.113.0/24", "a"));
    burst(ipam, 0, 150);
    await().atMost(WAIT).until(() -> assigned(150).size() >= 40);
    first.stop();
    operators.remove(first);
    Map<String, String> before = assigned(150);
    burst(ipam, 150, 170);
    start();
    await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> assertThat(assigned(170)).hasSize(170));
    await().atMost(WAIT).untilAsserted(() -> assertConsistent(ipam, 170));
    Map<String, String> after = assigned(170);
    before.forEach((ns, ip) -> assertThat(after.get(ns)).as(ns).isEqualTo(ip));
  }
}
