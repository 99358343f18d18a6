package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.Release;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import org.ipamoperators.testsupport.node.RealNode;
import org.ipamoperators.testsupport.node.RealNodeTest;
import org.junit.jupiter.api.Test;

/**
 * The chart in a namespace where Pod Security Admission enforces the {@code restricted} level, its pod run under a
 * UID the chart does not know, as OpenShift's restricted-v2 SCC assigns one from the namespace's range (the
 * primary group then is 0, as there): the pod is admitted, the JVM starts and the pod becomes Ready.
 */
@RealNodeTest(imageProperties = "ipam.image.vip")
class RestrictedPodSecurityOnNodeIT {
  /** A UID of the kind OpenShift hands out (the first of a namespace's range), unknown to the image. */
  private static final long UID = 1000680000L;
  private static final String RELEASE = "restricted";

  @Test
  void theChartRunsUnderTheRestrictedLevelWithAUidThePlatformPicks(RealNode node, KubernetesClient client) {
    KubernetesClient admin = node.adminClient();
    String ns = client.getNamespace();
    admin.namespaces().withName(ns).edit(n -> {
      var labels = new HashMap<>(n.getMetadata().getLabels() == null ? java.util.Map.of() : n.getMetadata().getLabels());
      labels.put("pod-security.kubernetes.io/enforce", "restricted");
      labels.put("pod-security.kubernetes.io/enforce-version", "latest");
      n.getMetadata().setLabels(labels);
      return n;
    });
    // Admission enforces the level here: a pod that may run as root is refused.
    assertThatThrownBy(() -> client.pods().resource(new PodBuilder().withNewMetadata().withName("root").endMetadata()
        .withNewSpec().addNewContainer().withName("c").withImage("ipam-operators/vip:any").endContainer().endSpec()
        .build()).create()).isInstanceOf(KubernetesClientException.class).hasMessageContaining("violates PodSecurity");

    Release release = new Helm(ChartOnNode.CHART).install().withName(RELEASE).withNamespace(ns)
        .withKubeConfig(node.kubeconfig()).set("image.pullPolicy", "Never").set("replicas", 1)
        .set("controllers.egressip.enabled", false).set("controllers.vip.enabled", true)
        .set("podSecurityContext.runAsUser", UID).set("podSecurityContext.fsGroup", UID).call();
    try {
      assertThat(release.getStatus()).isEqualTo("deployed");
      String name = RELEASE + "-vip";
      await().atMost(ChartOnNode.ROLLOUT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
        Deployment d = admin.apps().deployments().inNamespace(ns).withName(name).get();
        assertThat(d.getStatus().getReadyReplicas()).as("%s ready replicas (events: %s)", name, events(admin, ns))
            .isEqualTo(1);
      });
      List<Pod> pods = admin.pods().inNamespace(ns).withLabel("app.kubernetes.io/instance", RELEASE).list().getItems();
      assertThat(pods).singleElement().satisfies(pod -> {
        assertThat(pod.getSpec().getSecurityContext().getRunAsUser()).isEqualTo(UID);
        assertThat(pod.getStatus().getContainerStatuses()).allSatisfy(s -> assertThat(s.getRestartCount()).isZero());
        // The process really runs under the UID (primary group 0, as on OpenShift) and the JVM answered its probes.
        var id = node.kubectl("exec", "-n", ns, pod.getMetadata().getName(), "--", "id").orThrow();
        assertThat(id.stdout()).startsWith("uid=" + UID + " ").contains("gid=0");
        System.out.printf("restricted namespace: pod %s Ready %s after its JVM started, running as %s%n",
            pod.getMetadata().getName(), ChartOnNode.startToReady(pod), id.stdout().strip());
      });
    } finally {
      Helm.uninstall(RELEASE).withNamespace(ns).withKubeConfig(node.kubeconfig()).call();
    }
  }

  private static List<String> events(KubernetesClient admin, String ns) {
    return admin.v1().events().inNamespace(ns).list().getItems().stream()
        .map(e -> e.getInvolvedObject().getName() + ": " + e.getReason() + " " + e.getMessage()).toList();
  }
}
