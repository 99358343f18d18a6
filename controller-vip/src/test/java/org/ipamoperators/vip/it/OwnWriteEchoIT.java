package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.VipControllers;
import org.junit.jupiter.api.Test;

/**
 * The Service update that is only the operator's own status write coming back is not reconciled
 * again: the update filter registered by {@link VipControllers} knows the writes of the reconciler
 * it was registered with.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class OwnWriteEchoIT {
  /** Reconciles started, by Service name. */
  private static final class Reconciles implements Metrics {
    final Map<String, AtomicInteger> byService = new ConcurrentHashMap<>();

    @Override
    public void reconcileCustomResource(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
      if (resource instanceof Service) {
        byService.computeIfAbsent(resource.getMetadata().getName(), n -> new AtomicInteger()).incrementAndGet();
      }
    }

    int of(String service) {
      AtomicInteger n = byService.get(service);
      return n == null ? 0 : n.get();
    }
  }

  @Test
  void aServedServiceIsReconciledOnceNotAgainForItsOwnStatusWrite(KubeApiServer server, KubernetesClient client) {
    VipCluster cluster = new VipCluster(client);
    cluster.groupOf("echo", List.of("198.18.210.0/24"), null, null);
    Reconciles reconciles = new Reconciles();
    KubernetesClient c = server.newClient();
    Operator operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true).withMetrics(reconciles));
    VipControllers.register(operator, c, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    operator.start();
    try {
      cluster.create(cluster.lb("first"));
      await().atMost(Duration.ofSeconds(30)).until(() -> served(cluster, "first"));
      // The first Service's echo comes before the second's creation on the one watch of Services:
      // once the second is served, the filter has seen the first's echo.
      cluster.create(cluster.lb("second"));
      await().atMost(Duration.ofSeconds(30)).until(() -> served(cluster, "second"));
      await().atMost(Duration.ofSeconds(10)).until(() -> reconciles.of("second") >= 1);
      assertThat(reconciles.of("first")).as("reconciles of a Service served in its first pass").isEqualTo(1);
    } finally {
      operator.stop();
      cluster.close();
    }
  }

  private static boolean served(VipCluster cluster, String service) {
    var condition = cluster.condition(service);
    return !cluster.ingress(service).isEmpty() && condition != null && "True".equals(condition.getStatus());
  }
}
