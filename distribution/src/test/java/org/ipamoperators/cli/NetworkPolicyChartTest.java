package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The chart's optional NetworkPolicy: the operator's pods take connections on their http port only, from whom told. */
class NetworkPolicyChartTest {

  @Test
  void noNetworkPolicyUnlessAskedFor() {
    assertThat(HelmChartTest.objects(HelmChartTest.template())).noneMatch(o -> o instanceof NetworkPolicy);
  }

  @Test
  void eachControllersPodsAcceptOnlyTheHttpPortFromTheMonitoringNamespace() {
    List<HasMetadata> objects = HelmChartTest.objects(HelmChartTest.template()
        .set("controllers.keepalived.enabled", true).set("networkPolicy.enabled", true));
    List<NetworkPolicy> policies = objects.stream().filter(o -> o instanceof NetworkPolicy)
        .map(o -> (NetworkPolicy) o).toList();
    List<Deployment> deployments = objects.stream().filter(o -> o instanceof Deployment).map(o -> (Deployment) o)
        .toList();
    assertThat(policies).hasSameSizeAs(deployments).hasSize(2);
    for (Deployment d : deployments) {
      var podLabels = d.getSpec().getTemplate().getMetadata().getLabels();
      NetworkPolicy p = policies.stream().filter(np -> podLabels.entrySet()
          .containsAll(np.getSpec().getPodSelector().getMatchLabels().entrySet())).findFirst().orElseThrow();
      assertThat(p.getSpec().getPodSelector().getMatchLabels()).containsEntry("app.kubernetes.io/component",
          podLabels.get("app.kubernetes.io/component"));
      assertThat(p.getSpec().getPolicyTypes()).containsExactly("Ingress");
      NetworkPolicyIngressRule rule = p.getSpec().getIngress().get(0);
      assertThat(p.getSpec().getIngress()).hasSize(1);
      assertThat(rule.getPorts()).singleElement().satisfies(port -> {
        assertThat(port.getPort().getStrVal()).isEqualTo("http");
        assertThat(port.getProtocol()).isEqualTo("TCP");
      });
      // The named port is the one the metrics and probes use.
      assertThat(d.getSpec().getTemplate().getSpec().getContainers().get(0).getPorts())
          .anySatisfy(cp -> assertThat(cp.getName()).isEqualTo("http"));
      assertThat(rule.getFrom()).singleElement().satisfies(peer -> assertThat(peer.getNamespaceSelector()
          .getMatchLabels()).containsEntry("kubernetes.io/metadata.name", "monitoring"));
    }
  }

  @Test
  void thePeersAreTheValuesOwn() {
    List<HasMetadata> objects = HelmChartTest.objects(HelmChartTest.template().set("networkPolicy.enabled", true)
        .set("networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.team", "observability")
        .set("networkPolicy.metricsFrom[0].podSelector.matchLabels.app", "prometheus"));
    NetworkPolicy p = Manifests.one(objects, NetworkPolicy.class);
    assertThat(p.getSpec().getIngress().get(0).getFrom()).singleElement().satisfies(peer -> {
      assertThat(peer.getNamespaceSelector().getMatchLabels()).containsEntry("team", "observability");
      assertThat(peer.getPodSelector().getMatchLabels()).containsEntry("app", "prometheus");
    });
  }
}
