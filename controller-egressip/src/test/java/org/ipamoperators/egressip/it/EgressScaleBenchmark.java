package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * The scale benchmark (not part of the default run; a measurement, not a timed assertion):
 * 1,000 opted-in namespaces on 50 nodes in two zones, OpenShift SDN explicit mode. Measures the time
 * from the first namespace created until every namespace has its addresses and every address is on
 * exactly one HostSubnet, and the write requests the API server served meanwhile (from its own
 * apiserver_request_total), split into the test's own writes and the controller's. Run with
 * {@code mvn -pl controller-egressip verify -Dit.test=EgressScaleBenchmark}; results go to
 * docs/benchmarks.md by hand.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE})
class EgressScaleBenchmark {
  private static final int NAMESPACES = Integer.getInteger("ipam.scale.namespaces", 1000);
  private static final int NODES = Integer.getInteger("ipam.scale.nodes", 50);
  private static final Pattern WRITE = Pattern.compile(
      "^apiserver_request_total\\{[^}]*verb=\"(POST|PUT|PATCH|DELETE|APPLY)\"[^}]*\\} ([0-9.e+]+)$", Pattern.MULTILINE);

  private static double writes(KubernetesClient client) {
    String metrics = client.raw("/metrics");
    double total = 0;
    Matcher m = WRITE.matcher(metrics);
    while (m.find()) {
      total += Double.parseDouble(m.group(2));
    }
    return total;
  }

  @Test
  void thousandNamespacesOnFiftyNodes(KubeApiServer server, KubernetesClient client) throws Exception {
    EgressCluster cluster = new EgressCluster(client, "scale", true);
    for (int i = 0; i < NODES; i++) {
      cluster.node("n" + i, Map.of("zone", i % 2 == 0 ? "a" : "b"));
    }
    Operator operator = SdnEgressIT.startOperator(server);
    try {
      String ipam = cluster.n("ipam");
      cluster.ipam(ipam, "zone", null, 60, null, cidr("10.64.0.0/21", "a"), cidr("10.72.0.0/21", "b"));
      Thread.sleep(2000);
      double before = writes(client);
      long start = System.nanoTime();
      ExecutorService pool = Executors.newFixedThreadPool(8);
      for (int i = 0; i < NAMESPACES; i++) {
        int n = i;
        pool.submit(() -> cluster.namespace("ns" + n, ipam, null));
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.MINUTES)).isTrue();
      double created = (System.nanoTime() - start) / 1e9;
      await().atMost(Duration.ofMinutes(20)).pollInterval(Duration.ofSeconds(1)).until(() -> {
        int done = 0;
        for (var ns : client.namespaces().list().getItems()) {
          var a = ns.getMetadata().getAnnotations();
          if (a != null && a.containsKey("egressip-ipam-operator.redhat-cop.io/egressips")
              && ns.getMetadata().getName().startsWith("scale-ns")) {
            done++;
          }
        }
        return done == NAMESPACES && cluster.hostedAnywhere().size() == 2 * NAMESPACES;
      });
      double seconds = (System.nanoTime() - start) / 1e9;
      double after = writes(client);
      Map<String, java.util.List<String>> hosted = cluster.hostedAnywhere();
      assertThat(hosted).allSatisfy((ip, nodes) -> assertThat(nodes).hasSize(1));
      Set<String> all = new HashSet<>();
      for (int i = 0; i < NAMESPACES; i++) {
        for (String ip : cluster.egressIps("ns" + i).split(",")) {
          assertThat(all.add(ip)).as("%s handed out twice", ip).isTrue();
        }
      }
      Map<String, Integer> perNode = new TreeMap<>();
      hosted.forEach((ip, nodes) -> perNode.merge(nodes.get(0), 1, Integer::sum));
      int testWrites = 2 * NAMESPACES; // each namespace and its NetNamespace
      System.out.printf("%nSCALE egressip: %d namespaces, %d nodes: all assigned and placed in %.1f s "
          + "(namespaces created in %.1f s); API writes %.0f (test %d, controller %.0f, %.2f per namespace); "
          + "addresses per node min %d max %d%n", NAMESPACES, NODES, seconds, created, after - before, testWrites,
          after - before - testWrites, (after - before - testWrites) / NAMESPACES,
          perNode.values().stream().mapToInt(Integer::intValue).min().orElse(0),
          perNode.values().stream().mapToInt(Integer::intValue).max().orElse(0));
    } finally {
      operator.stop();
      cluster.close();
    }
  }
}
