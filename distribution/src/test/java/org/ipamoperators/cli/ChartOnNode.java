package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.Release;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.ipamoperators.testsupport.node.RealNode;

/**
 * The Helm chart installed on the real node with helm-java, as a user would (only {@code imagePullPolicy: Never}:
 * the node has no registry), and what the ITs ask of the controllers' pods: readiness, the Lease holder, /metrics.
 */
final class ChartOnNode {
  static final Path CHART = Path.of("target", "helm", "ipam-operators");
  static final String NAMESPACE = "ipam-operators";
  static final String RELEASE = "ipam";
  /** Rollout on a cold node: image unpacking, JVM start, caches synced. */
  static final Duration ROLLOUT = Duration.ofMinutes(3);

  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

  private ChartOnNode() {
  }

  /** {@code helm install ipam -n ipam-operators --create-namespace} with only {@code controllers} enabled. */
  static Release install(RealNode node, List<String> controllers, Map<String, Object> values) {
    InstallCommand install = new Helm(CHART).install().withName(RELEASE).withNamespace(NAMESPACE).createNamespace()
        .withKubeConfig(node.kubeconfig()).set("image.pullPolicy", "Never");
    for (String controller : List.of("egressip", "vip", "keepalived")) {
      install.set("controllers." + controller + ".enabled", controllers.contains(controller));
    }
    values.forEach(install::set);
    Release release = install.call();
    assertThat(release.getStatus()).isEqualTo("deployed");
    return release;
  }

  static void uninstall(RealNode node) {
    Helm.uninstall(RELEASE).withNamespace(NAMESPACE).withKubeConfig(node.kubeconfig()).call();
  }

  /** The controller's Deployment with every replica Ready (the kubelet called /readyz) and none restarted. */
  static List<Pod> awaitReady(KubernetesClient admin, String controller) {
    String name = RELEASE + "-" + controller;
    await().atMost(ROLLOUT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
      Deployment d = admin.apps().deployments().inNamespace(NAMESPACE).withName(name).get();
      assertThat(d).as(name).isNotNull();
      assertThat(d.getStatus().getReadyReplicas()).as("%s ready replicas", name)
          .isEqualTo(d.getSpec().getReplicas());
      assertThat(d.getStatus().getUpdatedReplicas()).isEqualTo(d.getSpec().getReplicas());
      assertThat(pods(admin, controller)).hasSize(d.getSpec().getReplicas());
    });
    return pods(admin, controller);
  }

  /** The running pods of a controller (not those being deleted). */
  static List<Pod> pods(KubernetesClient admin, String controller) {
    return admin.pods().inNamespace(NAMESPACE)
        .withLabel("app.kubernetes.io/component", controller).withLabel("app.kubernetes.io/instance", RELEASE)
        .list().getItems().stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
  }

  /** From the container's start (JVM start) to the pod's Ready condition, as the kubelet saw them (seconds). */
  static Duration startToReady(Pod pod) {
    String started = pod.getStatus().getContainerStatuses().get(0).getState().getRunning().getStartedAt();
    String ready = pod.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType())).findFirst()
        .orElseThrow().getLastTransitionTime();
    return Duration.between(java.time.Instant.parse(started), java.time.Instant.parse(ready));
  }

  /** The pod whose identity holds the controller's Lease ({@code <pod name>_<suffix>}), if any. */
  static Optional<Pod> leader(KubernetesClient admin, String controller) {
    Lease lease = admin.leases().inNamespace(NAMESPACE).withName(RELEASE + "-" + controller + "-leader").get();
    if (lease == null || lease.getSpec().getHolderIdentity() == null) {
      return Optional.empty();
    }
    String holder = lease.getSpec().getHolderIdentity();
    return pods(admin, controller).stream().filter(p -> holder.startsWith(p.getMetadata().getName() + "_"))
        .findFirst();
  }

  /** GET of the pod's /metrics (or another path) on its http port, from the host: the pod network is on cni0. */
  static String http(Pod pod, String path) throws IOException, InterruptedException {
    HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
            URI.create("http://" + pod.getStatus().getPodIP() + ":8080" + path)).timeout(Duration.ofSeconds(5)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as("%s %s", pod.getMetadata().getName(), path).isEqualTo(200);
    return response.body();
  }
}
