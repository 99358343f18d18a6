package org.ipamoperators.cli.demo;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@code ipam demo --node}: the Helm chart's controllers as pods on the real one-node Kubernetes of the test
 * environment, from the images this build made. Brings the node up ({@link DemoNode}), loads the egressip, vip and
 * keepalived images, installs the chart with helm-java, applies {@code demo/node-cluster.yaml}, prints what each
 * controller did, and stays up until Ctrl-C, when the node goes down and every host setting is restored.
 */
final class DemoOnNode {
  static final String PREPARE = "sudo bash scripts/test-env.sh";
  static final String BUILD_IMAGES = "mvn -pl distribution -am package -DskipTests "
      + "-Dipam.image.base=\"$(sudo bash scripts/image-base.sh)\"";
  static final List<String> CONTROLLERS = List.of("egressip", "vip", "keepalived");
  static final String NAMESPACE = "ipam-operators";
  static final String RELEASE = "ipam";
  static final String INTERFACE = "ipamnode-demo";
  private static final String VIP = "192.0.2.100";

  private final PrintWriter out;
  private final Duration timeout;

  DemoOnNode(PrintWriter out, Duration timeout) {
    this.out = out;
    this.timeout = timeout;
  }

  /** Where this code runs from: the shaded jar (distribution/target) or the classes (distribution/target/classes). */
  static Path codeLocation() {
    try {
      return Path.of(DemoOnNode.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getParent();
    } catch (java.net.URISyntaxException | RuntimeException e) {
      return Path.of("").toAbsolutePath();
    }
  }

  /**
   * Runs the demo; returns the exit status (2: the machine lacks the node tier or the images, with the command that
   * prepares them on {@code err}).
   */
  int run(Map<String, String> environment, Path images, Path chart, boolean exit, PrintWriter err)
      throws Exception {
    if (!"0".equals(uid())) {
      return refuse(err, "ipam demo --node runs a real kubelet and containerd: it needs root (sudo).");
    }
    DemoNode.Layout layout;
    try {
      layout = DemoNode.Layout.find(environment, System.getProperty("user.home"), codeLocation());
    } catch (DemoNode.Missing e) {
      return refuse(err, "ipam demo --node needs the real-node tier of the test environment (missing: "
          + e.getMessage() + "). Prepare it once (about 15 minutes, then cached) with: " + PREPARE);
    }
    Optional<String> missing = missingBuildOutput(images, chart);
    if (missing.isPresent()) {
      return refuse(err, missing.get());
    }
    return runOnNode(layout, images, chart, exit, err);
  }

  /** What the build has not made yet that the demo needs (the controller images, the chart), as the error to print. */
  static Optional<String> missingBuildOutput(Path images, Path chart) {
    for (String c : CONTROLLERS) {
      if (!Files.isRegularFile(images.resolve(c + ".tar"))) {
        return Optional.of("ipam demo --node needs the controller images (missing: " + images.resolve(c + ".tar")
            + "). Build them with: " + BUILD_IMAGES);
      }
    }
    if (!Files.isRegularFile(chart.resolve("Chart.yaml"))) {
      return Optional.of("ipam demo --node needs the built Helm chart (missing: " + chart.resolve("Chart.yaml")
          + "). Build it with: " + BUILD_IMAGES);
    }
    return Optional.empty();
  }

  private static int refuse(PrintWriter err, String why) {
    err.println(why);
    err.flush();
    return 2;
  }

  /** Starts the node, runs the chart and the example on it, and takes it down on exit, failure or Ctrl-C. */
  private int runOnNode(DemoNode.Layout layout, Path images, Path chart, boolean exit, PrintWriter err)
      throws Exception {
    out.println("Starting the real node (etcd, kube-apiserver, controller-manager, scheduler, containerd, kubelet, "
        + "kube-proxy) at " + DemoNode.NODE_IP + " ...");
    out.flush();
    long t0 = System.nanoTime();
    DemoNode node;
    try {
      node = DemoNode.start(layout, timeout, step -> {
        out.println("  " + step);
        out.flush();
      });
    } catch (IllegalStateException e) {
      err.println("ipam demo --node: " + e.getMessage());
      err.flush();
      return 1;
    }
    DemoTeardown teardown = new DemoTeardown("ipam-demo-node-teardown", () -> {
      out.println("Tearing the node down (processes, mounts, links, iptables, cgroups, sysctls) ...");
      out.flush();
      node.close();
      out.println("Node down, host restored.");
      out.flush();
    });
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(node.clientConfig()).build()) {
      out.printf("Node %s Ready in %d s; loading the images ...%n", DemoNode.NODE_NAME,
          Duration.ofNanos(System.nanoTime() - t0).toSeconds());
      out.flush();
      installChart(node, client, images, chart);
      applyExample(client);
      report(client);
      out.println();
      out.println("Explore it: kubectl --kubeconfig " + node.kubeconfig()
          + " get pods -A; ... get egressipams,ipgroups,keepalivedgroups,egressips -A");
      out.println("Node logs: " + node.logs());
      if (exit) {
        return 0;
      }
      out.println("Press Ctrl-C to stop and remove everything.");
      out.flush();
    } catch (RuntimeException | InterruptedException e) {
      out.flush();
      err.println("ipam demo --node: " + e.getMessage() + " (node logs: " + node.logs() + ")");
      err.flush();
      exit = true;
      return 1;
    } finally {
      if (exit) {
        teardown.now();
      }
    }
    teardown.await();
    return 0;
  }

  /** Loads the images into the node, installs the chart with them and waits for each controller to be Ready. */
  private void installChart(DemoNode node, KubernetesClient client, Path images, Path chart) throws Exception {
    for (String c : CONTROLLERS) {
      out.println("  " + String.join(", ", node.loadImage(images.resolve(c + ".tar"))));
    }
    try (InputStream crd = DemoOnNode.class.getResourceAsStream("/demo/egressips.k8s.ovn.org.yaml")) {
      client.load(crd).serverSideApply();
    }
    out.println("helm install " + RELEASE + " " + chart + " -n " + NAMESPACE + " (helm-java) ...");
    out.flush();
    out.println("  " + DemoHelmInstall.run(chart, node.kubeconfig(), NAMESPACE, RELEASE, helmSettings(), timeout));
    for (String c : CONTROLLERS) {
      await("the " + c + " Deployment Ready", () -> ready(client, c));
      Pod pod = client.pods().inNamespace(NAMESPACE).withLabel("app.kubernetes.io/component", c).list()
          .getItems().get(0);
      out.printf("  %-10s Deployment %s-%s Ready (pod %s, image %s, JVM start to Ready %d s)%n", c, RELEASE, c,
          pod.getMetadata().getName(), pod.getSpec().getContainers().get(0).getImage(), startToReady(pod));
    }
    out.flush();
  }

  /** The chart's values: the images loaded into the node, one replica, only the demo's controllers enabled. */
  private static List<String> helmSettings() {
    List<String> settings = new ArrayList<>(List.of("image.pullPolicy=Never", "replicas=1"));
    for (String c : List.of("egressip", "vip", "keepalived", "eip")) {
      settings.add("controllers." + c + ".enabled=" + CONTROLLERS.contains(c));
    }
    return settings;
  }

  /** Labels the node, applies the example cluster and waits until every controller has done its part. */
  private void applyExample(KubernetesClient client) throws IOException, InterruptedException {
    addInterface();
    client.nodes().withName(DemoNode.NODE_NAME).edit(n -> {
      n.getMetadata().getLabels().put("egress-zone", "a");
      n.getMetadata().getLabels().put("keepalived", "true");
      return n;
    });
    List<HasMetadata> objects;
    try (InputStream in = DemoOnNode.class.getResourceAsStream("/demo/node-cluster.yaml")) {
      objects = client.load(in).items();
    }
    for (HasMetadata o : objects) {
      client.resource(o).fieldManager("ipam-demo").serverSideApply();
    }
    await("the controllers' work", () -> done(client));
  }

  private static String uid() {
    try {
      Process p = new ProcessBuilder("id", "-u").redirectErrorStream(true).start();
      String id = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      p.waitFor();
      return id;
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }

  /** A port-less bridge of the demo's for keepalived's VRRP and VIP (down.sh removes every ipamnode-* link). */
  private static void addInterface() throws IOException, InterruptedException {
    for (List<String> cmd : List.of(List.of("ip", "link", "add", INTERFACE, "type", "bridge"),
        List.of("ip", "addr", "add", "192.0.2.65/32", "dev", INTERFACE), List.of("ip", "link", "set", INTERFACE,
            "up"))) {
      ip(cmd, true);
    }
  }

  private static String addresses() {
    try {
      return ip(List.of("ip", "-br", "addr", "show", "dev", INTERFACE), false);
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }

  private static String ip(List<String> cmd, boolean check) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0 && check) {
      throw new IllegalStateException(String.join(" ", cmd) + ": " + text.strip());
    }
    return text;
  }

  private static boolean ready(KubernetesClient client, String controller) {
    Deployment d = client.apps().deployments().inNamespace(NAMESPACE).withName(RELEASE + "-" + controller).get();
    return d != null && d.getStatus() != null && d.getSpec().getReplicas().equals(d.getStatus().getReadyReplicas());
  }

  private static long startToReady(Pod pod) {
    String started = pod.getStatus().getContainerStatuses().get(0).getState().getRunning().getStartedAt();
    String ready = pod.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType())).findFirst()
        .orElseThrow().getLastTransitionTime();
    return Duration.between(Instant.parse(started), Instant.parse(ready)).toSeconds();
  }

  private void await(String what, Supplier<Boolean> condition) throws InterruptedException {
    DemoCommand.await(what, timeout, condition);
  }

  private static boolean done(KubernetesClient client) {
    boolean egress = List.of("team-a", "team-b").stream().allMatch(ns -> DemoCommand.egressIps(client, ns) != null
        && client.genericKubernetesResources(DemoCommand.EGRESS_IP).withName("egressipam-" + ns).get()
        != null);
    Service shop = client.services().inNamespace("team-a").withName("shop").get();
    boolean vip = shop != null && shop.getStatus() != null && shop.getStatus().getLoadBalancer() != null
        && !shop.getStatus().getLoadBalancer().getIngress().isEmpty();
    DaemonSet edge = client.apps().daemonSets().inNamespace("team-b").withName("edge").get();
    boolean keepalived = edge != null && edge.getStatus() != null
        && Integer.valueOf(1).equals(edge.getStatus().getNumberReady()) && addresses().contains(VIP + "/32");
    return egress && vip && keepalived;
  }

  private void report(KubernetesClient client) {
    out.println();
    out.println("egressip: EgressIPAM egress-zone-a (192.0.2.48/28 on nodes labelled egress-zone=a: "
        + DemoNode.NODE_NAME + ")");
    for (String ns : List.of("team-a", "team-b")) {
      GenericKubernetesResource eip = client.genericKubernetesResources(DemoCommand.EGRESS_IP)
          .withName("egressipam-" + ns).get();
      Object spec = eip == null ? null : eip.getAdditionalProperties().get("spec");
      String ips = spec instanceof Map<?, ?> m ? String.valueOf(m.get("egressIPs")) : "(none yet)";
      out.printf("  namespace %-7s egress IPs %-14s EgressIP egressipam-%s %s%n", ns,
          DemoCommand.egressIps(client, ns), ns, ips);
    }
    out.println("vip: IPGroup demo-vips (192.0.2.160/28)");
    Service shop = client.services().inNamespace("team-a").withName("shop").get();
    out.printf("  Service team-a/shop (LoadBalancer) got %s%n", shop.getStatus().getLoadBalancer().getIngress()
        .stream().map(LoadBalancerIngress::getIp).toList());
    out.println("keepalived: KeepalivedGroup team-b/edge on interface " + INTERFACE + ", Service team-b/api with "
        + "external IP " + VIP);
    Pod pod = client.pods().inNamespace("team-b").withLabel("keepalivedGroup", "edge").list().getItems().get(0);
    String log = client.pods().inNamespace("team-b").withName(pod.getMetadata().getName()).inContainer("keepalived")
        .getLog();
    out.printf("  DaemonSet team-b/edge: pod %s Ready on %s (host network), keepalived %s%n",
        pod.getMetadata().getName(), pod.getSpec().getNodeName(),
        log.contains("Entering MASTER STATE") ? "entered MASTER state" : "not MASTER yet");
    out.printf("  %s on %s: %s%n", VIP, INTERFACE, addresses().strip());
    ConfigMap edge = client.configMaps().inNamespace("team-b").withName("edge").get();
    edge.getData().forEach((n, conf) -> {
      out.printf("  keepalived.conf for %s (ConfigMap team-b/edge):%n", n);
      conf.lines().forEach(line -> out.println("    " + line));
    });
    out.flush();
  }
}
