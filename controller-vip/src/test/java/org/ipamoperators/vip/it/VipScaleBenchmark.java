package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.ServiceRanges;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * The scale benchmark (not part of the default run, whose ITs end in IT; a measurement, not a timed
 * assertion): 5,000 LoadBalancer Services created at once (16 threads) against one /18 IPGroup.
 * Measures the time from the first Service created until every Service shows an address, and the
 * write requests the API server served meanwhile (from its own apiserver_request_total), split by
 * resource, the test's own creates taken out. The test apiserver's Service range is small, so a
 * ServiceCIDR is added (and marked Ready, kube-controller-manager's part). Run with
 * {@code mvn -pl controller-vip -am verify -Dit.test=VipScaleBenchmark -Dtest=NONE
 * -Dsurefire.failIfNoSpecifiedTests=false}; results go to docs/benchmarks.md by hand.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class VipScaleBenchmark {
  private static final int SERVICES = Integer.getInteger("ipam.scale.services", 5000);
  private static final String SERVICE_CIDR = "vip-scale-benchmark";
  private static final Pattern REQUEST = Pattern.compile("^apiserver_request_total\\{([^}]*)\\} ([0-9.e+]+)$",
      Pattern.MULTILINE);
  private static final Pattern LABEL = Pattern.compile("([a-z_]+)=\"([^\"]*)\"");

  /** Write requests so far by resource[/subresource] and verb. */
  private static Map<String, Double> writes(KubernetesClient client) {
    Map<String, Double> out = new TreeMap<>();
    Matcher m = REQUEST.matcher(client.raw("/metrics"));
    while (m.find()) {
      Map<String, String> labels = new TreeMap<>();
      Matcher l = LABEL.matcher(m.group(1));
      while (l.find()) {
        labels.put(l.group(1), l.group(2));
      }
      String verb = labels.getOrDefault("verb", "");
      if (!Set.of("POST", "PUT", "PATCH", "DELETE", "APPLY").contains(verb)) {
        continue;
      }
      String sub = labels.getOrDefault("subresource", "");
      String key = labels.getOrDefault("resource", "") + (sub.isEmpty() ? "" : "/" + sub) + " " + verb;
      out.merge(key, Double.parseDouble(m.group(2)), Double::sum);
    }
    return out;
  }

  @Test
  void fiveThousandServicesCreatedAtOnce(KubeApiServer server, KubernetesClient client) throws Exception {
    VipCluster cluster = new VipCluster(client);
    ServiceRanges.add(client, SERVICE_CIDR, "10.2.0.0/18"); // left to the throw-away apiserver with the Services
    cluster.groupOf("big", List.of("198.18.0.0/18"), null, null);
    Operator operator = VipCluster.startOperator(server);
    try {
      Thread.sleep(2000);
      Map<String, Double> before = writes(client);
      long start = System.nanoTime();
      ExecutorService pool = Executors.newFixedThreadPool(16);
      for (int i = 0; i < SERVICES; i++) {
        String name = "svc-" + i;
        pool.submit(() -> cluster.create(cluster.lb(name)));
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(20, TimeUnit.MINUTES)).isTrue();
      double created = (System.nanoTime() - start) / 1e9;
      await().atMost(Duration.ofMinutes(30)).pollInterval(Duration.ofSeconds(1)).until(() ->
          client.services().list().getItems().stream().filter(s -> !served(s)).count() == 0
              && client.services().list().getItems().size() == SERVICES);
      double seconds = (System.nanoTime() - start) / 1e9;
      Map<String, Double> after = writes(client);
      Set<String> addresses = new HashSet<>();
      for (Service s : client.services().list().getItems()) {
        assertThat(addresses.add(s.getStatus().getLoadBalancer().getIngress().get(0).getIp())).isTrue();
      }
      assertThat(cluster.claims()).hasSize(SERVICES);
      Map<String, Double> delta = new TreeMap<>();
      after.forEach((k, v) -> {
        double d = v - before.getOrDefault(k, 0.0);
        if (d > 0) {
          delta.put(k, d);
        }
      });
      double total = delta.values().stream().mapToDouble(Double::doubleValue).sum();
      double controller = total - SERVICES; // the test's own Service creates
      System.out.printf("%nSCALE vip: %d Services: all served in %.1f s (created in %.1f s); API writes %.0f "
          + "(test %d, controller %.0f, %.2f per Service); by resource: %s%n", SERVICES, seconds, created, total,
          SERVICES, controller, controller / SERVICES, delta);
    } finally {
      // The Services are left: this JVM's API server goes with it, and removing 5,000 finalizers
      // one by one would take minutes.
      operator.stop();
    }
  }

  private static boolean served(Service s) {
    return s.getStatus() != null && s.getStatus().getLoadBalancer() != null
        && s.getStatus().getLoadBalancer().getIngress() != null && !s.getStatus().getLoadBalancer().getIngress().isEmpty();
  }
}
