package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.ipamoperators.testsupport.Commands;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.node.RealNode;
import org.ipamoperators.testsupport.node.RealNodeTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart's controllers as pods on a real kubelet, from the image this build made, installed with
 * helm-java (all three controllers, the chart's defaults but {@code imagePullPolicy: Never}). Each Deployment
 * becomes Ready (the kubelet calls the probes), runs under the chart's ServiceAccount and RBAC with the in-cluster
 * token, wins its Lease and serves /metrics; a standby takes over when the leader pod is deleted.
 *
 * <p>keepalived: a KeepalivedGroup's DaemonSet pod runs (init container, reloader sidecar, host network,
 * capabilities), goes MASTER and puts the Service's VIP on an interface this test owns; a Service change reaches the
 * running keepalived through the ConfigMap, the reloader and SIGHUP (same pod, no restart); deleting the group
 * removes pods and ConfigMap by garbage collection and the VIP goes with them. egressip and vip serve a namespace
 * and a LoadBalancer Service end to end.
 */
@RealNodeTest(imageProperties = {"ipam.image.egressip", "ipam.image.vip", "ipam.image.keepalived"})
class ControllersOnNodeIT {
  /** A port-less bridge of this test's: VRRP and the VIPs stay on it (the node's teardown removes ipamnode-*). */
  private static final String INTERFACE = "ipamnode-vip";
  private static final String INTERFACE_ADDRESS = "192.0.2.65/32";
  private static final String VIP = "192.0.2.100";
  private static final String SECOND_VIP = "192.0.2.101";
  private static final Duration WAIT = Duration.ofMinutes(2);

  @BeforeAll
  static void installChart(RealNode node) {
    // OVN-Kubernetes' EgressIP kind, so that egressip has a cluster network to write to.
    ThirdPartyCrd.install(node.adminClient(), ThirdPartyCrd.EGRESS_IP);
    ChartOnNode.install(node, List.of("egressip", "vip", "keepalived"), Map.of());
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
    assertThat(client.pods().withName(podName).inContainer("config-reloader").getLog())
        .contains("configuration changed: keepalived (pid ").contains(") reloaded");

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

  /** Two groups select the one node: each gets its own metrics port on the node's address, both go MASTER. */
  @Test
  void twoGroupsShareTheNodeEachWithItsOwnMetricsPort(RealNode node, KubernetesClient client) throws Exception {
    ChartOnNode.awaitReady(node.adminClient(), "keepalived");
    String ns = client.getNamespace();
    Map<String, String> vips = Map.of("pair-a", "192.0.2.110", "pair-b", "192.0.2.111");
    List<GenericKubernetesResource> groups = new java.util.ArrayList<>();
    for (Map.Entry<String, String> e : vips.entrySet()) {
      GenericKubernetesResource group = new GenericKubernetesResource();
      group.setApiVersion("redhatcop.redhat.io/v1alpha1");
      group.setKind("KeepalivedGroup");
      group.setMetadata(new ObjectMetaBuilder().withName(e.getKey()).withNamespace(ns).build());
      group.setAdditionalProperty("spec", Map.of("interface", INTERFACE));
      groups.add(client.resource(group).create());
      client.services().resource(new ServiceBuilder().withNewMetadata().withName("svc-" + e.getKey())
          .withAnnotations(Map.of("keepalived-operator.redhat-cop.io/keepalivedgroup", ns + "/" + e.getKey()))
          .endMetadata().withNewSpec().withSelector(Map.of("app", e.getKey())).addNewPort().withPort(8080).endPort()
          .withExternalIPs(e.getValue()).endSpec().build()).create();
    }
    try {
      java.util.Set<Integer> ports = new java.util.HashSet<>();
      for (String name : vips.keySet()) {
        await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
          var ds = client.apps().daemonSets().withName(name).get();
          assertThat(ds).isNotNull();
          assertThat(ds.getStatus().getNumberReady()).as("%s ready on the node", name).isEqualTo(1);
        });
        Pod pod = client.pods().withLabel("keepalivedGroup", name).list().getItems().get(0);
        assertThat(pod.getSpec().getNodeName()).isEqualTo(RealNode.NODE_NAME);
        Integer port = pod.getSpec().getContainers().stream().filter(c -> c.getName().equals("config-reloader"))
            .flatMap(c -> c.getPorts().stream()).map(io.fabric8.kubernetes.api.model.ContainerPort::getContainerPort)
            .findFirst().orElseThrow();
        ports.add(port);
        await().atMost(WAIT).untilAsserted(() -> assertThat(client.pods().withName(pod.getMetadata().getName())
            .inContainer("keepalived").getLog()).contains("Entering MASTER STATE"));
        // Served on the pod's (the node's) address, not on every interface.
        String ip = pod.getStatus().getPodIP();
        // The reloader's HTTP server may come up a moment after keepalived's first MASTER line.
        await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).ignoreExceptions().untilAsserted(() -> {
          java.net.http.HttpResponse<String> metrics = java.net.http.HttpClient.newHttpClient().send(
              java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://" + ip + ":" + port + "/metrics"))
                  .timeout(Duration.ofSeconds(10)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
          assertThat(metrics.statusCode()).isEqualTo(200);
          assertThat(metrics.body()).contains("keepalived_up");
        });
      }
      assertThat(ports).as("one metrics port per group").hasSize(2);
      await().atMost(WAIT).untilAsserted(() -> assertThat(addresses()).contains("192.0.2.110/32", "192.0.2.111/32"));
    } finally {
      groups.forEach(g -> client.resource(g).delete());
      await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> vips.keySet().forEach(name ->
          assertThat(client.apps().daemonSets().withName(name).get()).isNull()));
    }
  }

  @Test
  void everyControllerIsReadyLeadsAndServesMetricsAndAStandbyTakesOverFromADeletedLeader(RealNode node)
      throws Exception {
    KubernetesClient admin = node.adminClient();
    for (String controller : List.of("egressip", "vip", "keepalived")) {
      List<Pod> pods = ChartOnNode.awaitReady(admin, controller);
      assertThat(pods).hasSize(2).allSatisfy(p -> {
        assertThat(p.getSpec().getServiceAccountName()).isEqualTo("ipam-" + controller);
        assertThat(p.getStatus().getContainerStatuses()).allSatisfy(s -> assertThat(s.getRestartCount()).isZero());
      });
      pods.forEach(p -> System.out.printf("%s: JVM start to Ready %d s, image %s%n", p.getMetadata().getName(),
          ChartOnNode.startToReady(p).toSeconds(), p.getSpec().getContainers().get(0).getImage()));
      await().atMost(WAIT).untilAsserted(() -> assertThat(ChartOnNode.leader(admin, controller)).isPresent());
      Pod leader = ChartOnNode.leader(admin, controller).orElseThrow();
      Pod standby = pods.stream().filter(p -> !p.getMetadata().getName().equals(leader.getMetadata().getName()))
          .findFirst().orElseThrow();
      assertThat(ChartOnNode.http(leader, "/metrics")).as(controller).contains("ipam_operator_leader 1.0");
      assertThat(ChartOnNode.http(standby, "/metrics")).as(controller).contains("ipam_operator_leader 0.0");
      assertThat(ChartOnNode.http(standby, "/readyz")).as(controller).startsWith("ok: standby");
    }

    // The vip leader pod is deleted: it hands the Lease back on SIGTERM and the warm standby leads.
    Pod leader = ChartOnNode.leader(admin, "vip").orElseThrow();
    admin.pods().inNamespace(ChartOnNode.NAMESPACE).withName(leader.getMetadata().getName()).delete();
    await().atMost(WAIT).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
      Optional<Pod> next = ChartOnNode.leader(admin, "vip");
      assertThat(next).as("a new vip leader").isPresent();
      assertThat(next.get().getMetadata().getName()).isNotEqualTo(leader.getMetadata().getName());
      assertThat(ChartOnNode.http(next.get(), "/metrics")).contains("ipam_operator_leader 1.0");
    });
    // The ReplicaSet replaces the deleted pod, and the replacement becomes Ready as a standby.
    ChartOnNode.awaitReady(admin, "vip");
  }

  @Test
  void egressipGivesAnOptedInNamespaceAnEgressIpOnTheNode(RealNode node, KubernetesClient client) {
    KubernetesClient admin = node.adminClient();
    ChartOnNode.awaitReady(admin, "egressip");
    // Short: the IPAM's name becomes a label value (63 characters at most) on the EgressIP objects.
    String ipam = "egress-" + client.getNamespace().substring(client.getNamespace().length() - 6);
    admin.nodes().withName(RealNode.NODE_NAME).edit(n -> {
      n.getMetadata().getLabels().put("egress-zone", "a");
      return n;
    });
    try {
      EgressFixtures.egressIpam(admin, ipam, "192.0.2.144/28", "egress-zone", "a");
      admin.namespaces().withName(client.getNamespace()).edit(n -> {
        n.getMetadata().getAnnotations().put("egressip-ipam-operator.redhat-cop.io/egressipam", ipam);
        return n;
      });
      await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
        String ips = admin.namespaces().withName(client.getNamespace()).get().getMetadata().getAnnotations()
            .get("egressip-ipam-operator.redhat-cop.io/egressips");
        assertThat(ips).as("egress IP of the namespace").startsWith("192.0.2.14");
        GenericKubernetesResource egressIp = ThirdPartyCrd.EGRESS_IP.resources(admin)
            .withName("egressipam-" + client.getNamespace()).get();
        assertThat(egressIp).isNotNull();
        assertThat(egressIp.get("spec", "egressIPs").toString()).contains(ips);
        assertThat(admin.nodes().withName(RealNode.NODE_NAME).get().getMetadata().getLabels())
            .containsKey("k8s.ovn.org/egress-assignable");
      });
    } finally {
      admin.genericKubernetesResources(EgressFixtures.EGRESSIPAM).withName(ipam).delete();
      admin.nodes().withName(RealNode.NODE_NAME).edit(n -> {
        n.getMetadata().getLabels().remove("egress-zone");
        return n;
      });
    }
  }

  @Test
  void vipGivesALoadBalancerServiceAnAddressAndTakesItBack(RealNode node, KubernetesClient client) {
    KubernetesClient admin = node.adminClient();
    ChartOnNode.awaitReady(admin, "vip");
    String groupName = client.getNamespace() + "-vips";
    GenericKubernetesResource ipGroup = new GenericKubernetesResource();
    ipGroup.setApiVersion("paas.org/v1");
    ipGroup.setKind("IPGroup");
    ipGroup.setMetadata(new ObjectMetaBuilder().withName(groupName).build());
    ipGroup.setAdditionalProperty("spec", Map.of("segment", "192.0.2.160/29"));
    admin.resource(ipGroup).create();
    try {
      client.services().resource(new ServiceBuilder().withNewMetadata().withName("lb").endMetadata()
          .withNewSpec().withType("LoadBalancer").withAllocateLoadBalancerNodePorts(false)
          .withSelector(Map.of("app", "lb")).addNewPort().withPort(443).endPort().endSpec().build()).create();
      await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() ->
          assertThat(client.services().withName("lb").get().getStatus().getLoadBalancer().getIngress())
              .extracting(LoadBalancerIngress::getIp).singleElement()
              .satisfies(ip -> assertThat(ip).startsWith("192.0.2.16")));
      client.services().withName("lb").delete();
      // The controller's finalizer releases the address, then the Service goes.
      await().atMost(WAIT).untilAsserted(() -> assertThat(client.services().withName("lb").get()).isNull());
    } finally {
      admin.resource(ipGroup).delete();
    }
  }

  private static List<Pod> groupPods(KubernetesClient client) {
    return client.pods().withLabel("keepalivedGroup", "vips").list().getItems();
  }

  private static String addresses() {
    return Commands.run("ip", "-br", "addr", "show", "dev", INTERFACE).orThrow().stdout();
  }
}
