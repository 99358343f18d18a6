package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.ServiceRanges;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * 500 LoadBalancer Services created at once get 500 distinct addresses, one claim each. The test
 * apiserver's own Service range (10.0.0.0/24) is too small for 500 cluster IPs, so the test adds a
 * ServiceCIDR and, playing kube-controller-manager's part, marks it Ready.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class ScaleIT {
  private static final int SERVICES = 500;
  private AutoCloseable serviceRange;
  private Operator operator;
  private VipCluster cluster;
  private KubernetesClient client;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    cluster = new VipCluster(client);
    serviceRange = ServiceRanges.add(client, "vip-scale-it", "10.1.0.0/22");
    operator = VipCluster.startOperator(server);
  }

  @AfterEach
  void stop() throws Exception {
    operator.stop();
    cluster.close();
    serviceRange.close();
  }

  @Test
  void fiveHundredServicesCreatedAtOnceGetFiveHundredDistinctAddresses() throws Exception {
    cluster.groupOf("big", List.of("198.18.0.0/22"), null, null);
    ExecutorService pool = Executors.newFixedThreadPool(16);
    List<Future<Service>> created = new ArrayList<>();
    long started = System.nanoTime();
    try {
      for (int i = 0; i < SERVICES; i++) {
        String name = "svc-" + i;
        created.add(pool.submit(() -> cluster.create(cluster.lb(name))));
      }
      for (Future<Service> f : created) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
    await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
      List<Service> all = client.services().list().getItems();
      long served = all.stream().filter(s -> s.getStatus() != null && s.getStatus().getLoadBalancer() != null
          && s.getStatus().getLoadBalancer().getIngress() != null
          && !s.getStatus().getLoadBalancer().getIngress().isEmpty()).count();
      assertThat(served).isEqualTo(SERVICES);
    });
    Set<String> addresses = new HashSet<>();
    for (Service s : client.services().list().getItems()) {
      assertThat(s.getStatus().getLoadBalancer().getIngress()).hasSize(1);
      addresses.add(s.getStatus().getLoadBalancer().getIngress().get(0).getIp());
    }
    assertThat(addresses).hasSize(SERVICES);
    assertThat(cluster.claims()).hasSize(SERVICES);
    assertThat(cluster.claims().stream().map(c -> c.getSpec().address()).toList())
        .containsExactlyInAnyOrderElementsOf(addresses);
    System.out.printf("%d Services served in %d ms%n", SERVICES, Duration.ofNanos(System.nanoTime() - started).toMillis());
  }
}
