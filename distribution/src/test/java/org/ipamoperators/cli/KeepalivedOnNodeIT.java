package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.testsupport.Commands;
import org.ipamoperators.testsupport.node.RealNode;
import org.ipamoperators.testsupport.node.RealNodeTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The chart's keepalived controller as pods on a real kubelet, from the image this build made: its Deployment
 * becomes Ready (the kubelet calls its probes), runs under the chart's ServiceAccount and RBAC with the in-cluster
 * token, and for a KeepalivedGroup creates a DaemonSet whose pod runs (init container, reloader sidecar, host
 * network, capabilities), goes MASTER and puts the Service's VIP on an interface this test owns; a Service change
 * reaches the running keepalived through the ConfigMap, the reloader and SIGHUP (same pod, no restart); deleting
 * the group removes pods and ConfigMap by garbage collection and the VIP goes with them.
 */
@RealNodeTest(imageProperties = "ipam.image.tar")
class KeepalivedOnNodeIT {
  /** A port-less bridge of this test's: VRRP adverts and the VIPs stay on it. */
  private static final String INTERFACE = "ipamvip0";
  private static final String INTERFACE_ADDRESS = "192.0.2.65/32";
  private static final String VIP = "192.0.2.100";
  private static final String SECOND_VIP = "192.0.2.101";
  private static final Duration WAIT = Duration.ofMinutes(2);

  @BeforeAll
  static void installChart(RealNode node) {
    ChartOnNode.install(node, List.of("keepalived"), Map.of());
  }

  @AfterAll
  static void uninstallChart(RealNode node) {
    ChartOnNode.uninstall(node);
  }

  @BeforeEach
  void addInterface() {
    Commands.run("ip", "link", "del", INTERFACE);
    Commands.run("ip", "link", "add", INTERFACE, "type", "bridge").orThrow();
    Commands.run("ip", "addr", "add", INTERFACE_ADDRESS, "dev", INTERFACE).orThrow();
    Commands.run("ip", "link", "set", INTERFACE, "up").orThrow();
  }

  @AfterEach
  void removeInterface() {
    Commands.run("ip", "link", "del", INTERFACE);
  }

  @Test
  void aGroupsDaemonSetGoesMasterAndFollowsItsServices(RealNode node, KubernetesClient client) {
    KubernetesClient admin = node.adminClient();
    List<Pod> operators = ChartOnNode.awaitReady(admin, "keepalived");
    for (Pod pod : operators) {
      assertThat(pod.getSpec().getServiceAccountName()).isEqualTo("ipam-keepalived");
      assertThat(pod.getSpec().getContainers().get(0).getImagePullPolicy()).isEqualTo("Never");
      assertThat(pod.getStatus().getContainerStatuses()).allSatisfy(s -> assertThat(s.getRestartCount()).isZero());
      // In-cluster configuration: the kubernetes Service (kube-proxy) and the pod's ServiceAccount token.
      assertThat(admin.pods().inNamespace(ChartOnNode.NAMESPACE).withName(pod.getMetadata().getName()).getLog())
          .contains("cluster https://203.0.113.1:443");
    }
    await().atMost(WAIT).untilAsserted(() -> assertThat(ChartOnNode.leader(admin, "keepalived")).isPresent());

    String ns = client.getNamespace();
    GenericKubernetesResource group = new GenericKubernetesResource();
    group.setApiVersion("redhatcop.redhat.io/v1alpha1");
    group.setKind("KeepalivedGroup");
    group.setMetadata(new ObjectMetaBuilder().withName("vips").withNamespace(ns).build());
    group.setAdditionalProperty("spec", Map.of("interface", INTERFACE));
    client.resource(group).create();
    client.services().resource(new ServiceBuilder().withNewMetadata().withName("web")
        .withAnnotations(Map.of("keepalived-operator.redhat-cop.io/keepalivedgroup", ns + "/vips")).endMetadata()
        .withNewSpec().withSelector(Map.of("app", "web")).addNewPort().withPort(8080).endPort()
        .withExternalIPs(VIP).endSpec().build()).create();

    await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
      var ds = client.apps().daemonSets().withName("vips").get();
      assertThat(ds).isNotNull();
      assertThat(ds.getStatus().getNumberReady()).isEqualTo(1);
    });
    Pod keepalived = groupPods(client).get(0);
    assertThat(keepalived.getSpec().getHostNetwork()).isTrue();
    assertThat(keepalived.getSpec().getNodeName()).isEqualTo(RealNode.NODE_NAME);
    assertThat(keepalived.getStatus().getInitContainerStatuses()).singleElement().satisfies(s -> {
      assertThat(s.getName()).isEqualTo("config-setup");
      assertThat(s.getState().getTerminated().getExitCode()).isZero();
    });
    assertThat(keepalived.getStatus().getContainerStatuses()).extracting(ContainerStatus::getName)
        .containsExactlyInAnyOrder("keepalived", "config-reloader");
    String podName = keepalived.getMetadata().getName();

    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(addresses()).contains(VIP + "/32");
      assertThat(client.pods().withName(podName).inContainer("keepalived").getLog()).contains("Entering MASTER STATE");
    });

    // A second external IP: ConfigMap -> kubelet's volume sync -> reloader -> config test -> SIGHUP.
    client.services().withName("web").edit(s -> {
      s.getSpec().setExternalIPs(List.of(VIP, SECOND_VIP));
      return s;
    });
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(client.configMaps().withName("vips").get().getData().get(RealNode.NODE_NAME)).contains(SECOND_VIP);
      assertThat(addresses()).contains(VIP + "/32", SECOND_VIP + "/32");
    });
    Pod after = client.pods().withName(podName).get();
    assertThat(after.getMetadata().getUid()).isEqualTo(keepalived.getMetadata().getUid());
    assertThat(after.getStatus().getContainerStatuses()).allSatisfy(s -> assertThat(s.getRestartCount()).isZero());
    assertThat(client.pods().withName(podName).inContainer("keepalived").getLog()).contains("Reloading");

    // The group goes: the controller's finalizer, then the garbage collector takes DaemonSet, pods, ConfigMap.
    client.resource(group).delete();
    await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
      assertThat(client.apps().daemonSets().withName("vips").get()).isNull();
      assertThat(client.configMaps().withName("vips").get()).isNull();
      assertThat(groupPods(client)).isEmpty();
      assertThat(addresses()).doesNotContain(VIP + "/32", SECOND_VIP + "/32");
    });
    List<ConfigMap> left = client.configMaps().withLabel("keepalivedGroup", "vips").list().getItems();
    assertThat(left).isEmpty();
  }

  private static List<Pod> groupPods(KubernetesClient client) {
    return client.pods().withLabel("keepalivedGroup", "vips").list().getItems();
  }

  private static String addresses() {
    return Commands.run("ip", "-br", "addr", "show", "dev", INTERFACE).orThrow().stdout();
  }
}
