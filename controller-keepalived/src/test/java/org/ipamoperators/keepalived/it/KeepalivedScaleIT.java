package org.ipamoperators.keepalived.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.ipamoperators.keepalived.config.ConfigCheckNode;
import org.ipamoperators.testsupport.keepalived.ConfigCheck;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.ServiceRanges;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A full router-id space: 250 Services created at once for one group, then a second group on the same network
 * whose ten Services find only the five ids left. The test API server gets a larger Service range (a ServiceCIDR,
 * marked Ready as kube-controller-manager would) for the cluster IPs.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"})
class KeepalivedScaleIT {
  private static final int SERVICES = 250;
  private AutoCloseable serviceRange;
  private Operator operator;
  private KeepalivedCluster cluster;
  private KubernetesClient client;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    cluster = new KeepalivedCluster(client);
    serviceRange = ServiceRanges.add(client, "keepalived-scale-it", "10.2.0.0/22");
    operator = KeepalivedCluster.startOperator(server);
  }

  @AfterEach
  void stop() throws Exception {
    operator.stop();
    cluster.close();
    serviceRange.close();
  }

  @Test
  void twoHundredFiftyServicesAtOnceThenASecondGroupGetsWhatIsLeft() throws Exception {
    cluster.node("a", "203.0.113.10");
    cluster.node("b", "203.0.113.11");
    cluster.node("c", "203.0.113.12");
    cluster.group("big", KeepalivedCluster.spec(cluster.ns).build());
    ExecutorService pool = Executors.newFixedThreadPool(16);
    long started = System.nanoTime();
    try {
      List<Future<?>> created = new ArrayList<>();
      for (int i = 0; i < SERVICES; i++) {
        int n = i;
        created.add(pool.submit(() -> cluster.externalIps("svc-" + n, "big", "198.51.100." + (n + 1))));
      }
      for (Future<?> f : created) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
    await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
      assertThat(cluster.routerIds("big")).hasSize(SERVICES);
      assertThat(cluster.config("big", "c").split("vrrp_instance ", -1)).hasSize(SERVICES + 1);
    });
    long converged = Duration.ofNanos(System.nanoTime() - started).toMillis();
    assertThat(new HashSet<>(cluster.routerIds("big").values())).hasSize(SERVICES);

    // The same network's second group: five ids left for ten services.
    cluster.group("late", KeepalivedCluster.spec(cluster.ns).build());
    for (int i = 0; i < 10; i++) {
      cluster.externalIps("late-" + i, "late", "203.0.113." + (100 + i));
    }
    await().atMost(Duration.ofMinutes(1)).untilAsserted(() -> {
      assertThat(cluster.serviceCount("late")).isEqualTo(10);
      assertThat(cluster.routerIds("late")).hasSize(5);
      assertThat(cluster.condition("late", "RouterIDsExhausted")).isEqualTo("True");
    });
    Set<Integer> all = new HashSet<>(cluster.routerIds("big").values());
    all.addAll(cluster.routerIds("late").values());
    assertThat(all).hasSize(255);
    assertThat(cluster.routerIds("big")).hasSize(SERVICES);
    assertThat(cluster.condition("big", "RouterIDsExhausted")).isEqualTo("False");

    // The full configuration of a node passes keepalived's own check.
    Map<String, String> configs = cluster.configs("big");
    try (ConfigCheckNode checker = new ConfigCheckNode()) {
      ConfigCheck check = checker.check(configs.get(cluster.nodeName("a")));
      assertThat(check.valid()).as(check.output()).isTrue();
    }
    System.out.printf("%d services of one group announced (ids claimed, 3 node configurations written) in %d ms;"
        + " ConfigMap %d bytes%n", SERVICES, converged,
        configs.values().stream().mapToInt(String::length).sum());
  }
}
