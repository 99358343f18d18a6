package org.ipamoperators.cli.demo;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NodeAddressBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.InputStream;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.ipamoperators.cli.DurationConverter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ipam demo}: the real job on a throw-away cluster. Starts etcd and kube-apiserver from the test
 * environment's binaries, runs the three controllers ({@code ipam operator}, CRDs installed by it), applies a small
 * cluster (two egress zones, two opted-in namespaces, an address pool with a LoadBalancer Service, a keepalived
 * group with a Service), prints what each controller did, and stays up for kubectl until Ctrl-C, then removes
 * everything. No kubelet: the keepalived DaemonSet is created but no pod runs (the real-node tier runs them).
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Run the controllers on a throw-away local cluster (etcd + kube-apiserver from "
        + DemoCluster.PREPARE + "; with --node a real node and the Helm chart), apply an example cluster, show "
        + "what they did; Ctrl-C removes everything.")
public final class DemoCommand implements Callable<Integer> {
  static final ResourceDefinitionContext EGRESS_IP = new ResourceDefinitionContext.Builder()
      .withGroup("k8s.ovn.org").withVersion("v1").withKind("EgressIP").withPlural("egressips")
      .withNamespaced(false).build();
  private static final List<String> CRDS = List.of("egressipams.redhatcop.redhat.io", "ipgroups.paas.org",
      "keepalivedgroups.redhatcop.redhat.io");

  @Spec
  CommandSpec spec;

  /** Where the test environment is looked up; tests replace it. */
  Map<String, String> environment = System.getenv();

  @Option(names = "--exit", description = "stop after printing what the controllers did (scripts, tests)")
  boolean exit;

  @Option(names = "--node", description = "run the Helm chart's controllers as pods on a real one-node Kubernetes "
      + "(kubelet, containerd; as root, prepared by " + DemoOnNode.PREPARE + ") from the images this build made")
  boolean node;

  @Option(names = "--images", paramLabel = "DIR", description = "with --node: the controller image tars "
      + "(default: images/ next to the ipam jar, where the build writes them)")
  java.nio.file.Path images;

  @Option(names = "--chart", paramLabel = "DIR", description = "with --node: the Helm chart "
      + "(default: helm/ipam-operators next to the ipam jar)")
  java.nio.file.Path chart;

  @Option(names = "--timeout", defaultValue = "180s", converter = DurationConverter.class, paramLabel = "DURATION",
      description = "how long to wait for the cluster and the controllers (default: ${DEFAULT-VALUE})")
  Duration timeout;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (node) {
      java.nio.file.Path home = DemoOnNode.codeLocation();
      return new DemoOnNode(out, timeout).run(environment, images != null ? images : home.resolve("images"),
          chart != null ? chart : home.resolve("helm").resolve("ipam-operators"), exit, err);
    }
    Optional<java.nio.file.Path> bin = DemoCluster.binaries(environment, System.getProperty("user.home"));
    if (bin.isEmpty()) {
      err.println("ipam demo needs etcd, kube-apiserver and kubectl " + DemoCluster.VERSION
          + " from the test environment. Prepare it once (about 7 minutes, then cached) with: "
          + DemoCluster.PREPARE);
      err.flush();
      return 2;
    }
    out.println("Starting etcd and kube-apiserver " + DemoCluster.VERSION + " from " + bin.get() + " ...");
    out.flush();
    DemoCluster cluster = DemoCluster.start(bin.get(), timeout);
    DemoTeardown teardown = new DemoTeardown("ipam-demo-teardown", cluster::close);
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(cluster.clientConfig()).build()) {
      runControllers(cluster, client, out);
      if (exit) {
        return 0;
      }
      out.println("Press Ctrl-C to stop and remove everything.");
      out.flush();
    } catch (RuntimeException | InterruptedException e) {
      err.println("ipam demo: " + e.getMessage() + " (logs: " + cluster.logs() + ")");
      err.flush();
      return 1;
    } finally {
      if (exit) {
        teardown.now();
      }
    }
    teardown.await();
    return 0;
  }

  /** Starts the controllers on the cluster, applies the example and prints what they did with it. */
  private void runControllers(DemoCluster cluster, KubernetesClient client, PrintWriter out) throws Exception {
    out.println("Cluster up at " + cluster.url() + "; starting the controllers egressip, vip, keepalived ...");
    out.flush();
    // OVN-Kubernetes' EgressIP kind first: the cluster network egressip writes to.
    try (InputStream crd = DemoCommand.class.getResourceAsStream("/demo/egressips.k8s.ovn.org.yaml")) {
      client.load(crd).serverSideApply();
    }
    await("the EgressIP CRD", () -> established(client, "egressips.k8s.ovn.org"));
    cluster.launchJava("operator", List.of("operator", "--controllers=egressip,vip,keepalived",
        "--kubeconfig", cluster.kubeconfig().toString(), "--install-crds", "--no-leader-election",
        "--namespace", "default", "--bind-address", "127.0.0.1", "--http-port", "0"));
    await("the controllers' CRDs", () -> CRDS.stream().allMatch(name -> established(client, name)));
    applyExample(client);
    await("the controllers' work", () -> done(client));
    report(client, out);
    out.println();
    out.println("Explore it: kubectl --kubeconfig " + cluster.kubeconfig()
        + " get egressipams,ipgroups,keepalivedgroups,egressips -A");
    out.println("Controller log: " + cluster.logs().resolve("operator.log"));
  }

  private void await(String what, Supplier<Boolean> condition) throws InterruptedException {
    await(what, timeout, condition);
  }

  /** Polls {@code condition} (exceptions count as not yet) until it holds, or fails after {@code timeout}. */
  static void await(String what, Duration timeout, Supplier<Boolean> condition) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      try {
        if (condition.get()) {
          return;
        }
      } catch (RuntimeException e) {
        // not there yet
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException("timed out after " + timeout + " waiting for " + what);
  }

  private static boolean established(KubernetesClient client, String name) {
    CustomResourceDefinition crd = client.apiextensions().v1().customResourceDefinitions().withName(name).get();
    return crd != null && crd.getStatus() != null && crd.getStatus().getConditions().stream()
        .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  private static void applyExample(KubernetesClient client) throws Exception {
    List<HasMetadata> objects;
    try (InputStream in = DemoCommand.class.getResourceAsStream("/demo/cluster.yaml")) {
      objects = client.load(in).items();
    }
    String now = Instant.now().toString();
    int n = 0;
    for (HasMetadata o : objects) {
      if (o instanceof io.fabric8.kubernetes.api.model.Node node) {
        client.resource(node).fieldManager("ipam-demo").serverSideApply();
        // No kubelet: the demo writes what one would report, Ready with an InternalIP.
        NodeStatus status = new NodeStatus();
        status.setConditions(List.of(new NodeConditionBuilder().withType("Ready").withStatus("True")
            .withReason("KubeletReady").withLastHeartbeatTime(now).withLastTransitionTime(now).build()));
        status.setAddresses(List.of(new NodeAddressBuilder().withType("InternalIP")
            .withAddress("192.0.2." + (200 + n++)).build()));
        var live = client.nodes().withName(node.getMetadata().getName()).get();
        live.setStatus(status);
        client.nodes().resource(live).updateStatus();
      }
    }
    for (HasMetadata o : objects) {
      if (!(o instanceof io.fabric8.kubernetes.api.model.Node)) {
        client.resource(o).fieldManager("ipam-demo").serverSideApply();
      }
    }
  }

  private static boolean done(KubernetesClient client) {
    boolean egress = List.of("team-a", "team-b").stream().allMatch(ns -> egressIps(client, ns) != null
        && client.genericKubernetesResources(EGRESS_IP).withName("egressipam-" + ns).get() != null);
    Service shop = client.services().inNamespace("team-a").withName("shop").get();
    boolean vip = shop != null && shop.getStatus() != null && shop.getStatus().getLoadBalancer() != null
        && !shop.getStatus().getLoadBalancer().getIngress().isEmpty();
    ConfigMap edge = client.configMaps().inNamespace("team-b").withName("edge").get();
    boolean keepalived = edge != null && edge.getData() != null && edge.getData().values().stream()
        .anyMatch(conf -> conf.contains("203.0.113.80"));
    return egress && vip && keepalived;
  }

  static String egressIps(KubernetesClient client, String namespace) {
    Namespace ns = client.namespaces().withName(namespace).get();
    return ns == null || ns.getMetadata().getAnnotations() == null ? null
        : ns.getMetadata().getAnnotations().get("egressip-ipam-operator.redhat-cop.io/egressips");
  }

  private static void report(KubernetesClient client, PrintWriter out) {
    out.println();
    out.println("egressip: EgressIPAM egress-two-zones (zone a 192.0.2.0/28, zone b 192.0.2.16/28)");
    for (String ns : List.of("team-a", "team-b")) {
      GenericKubernetesResource eip = client.genericKubernetesResources(EGRESS_IP).withName("egressipam-" + ns).get();
      Object spec = eip == null ? null : eip.getAdditionalProperties().get("spec");
      String ips = spec instanceof Map<?, ?> m ? String.valueOf(m.get("egressIPs")) : "(none yet)";
      out.printf("  namespace %-7s egress IPs %-22s EgressIP egressipam-%s %s%n", ns, egressIps(client, ns), ns, ips);
    }
    out.println("vip: IPGroup demo-vips (198.51.100.0/28)");
    Service shop = client.services().inNamespace("team-a").withName("shop").get();
    out.printf("  Service team-a/shop (LoadBalancer) got %s%n", shop.getStatus().getLoadBalancer().getIngress()
        .stream().map(LoadBalancerIngress::getIp).toList());
    out.println("keepalived: KeepalivedGroup team-b/edge, Service team-b/api with external IP 203.0.113.80");
    boolean daemonSet = client.apps().daemonSets().inNamespace("team-b").withName("edge").get() != null;
    out.printf("  DaemonSet team-b/edge %s (no kubelet here: no pod runs)%n", daemonSet ? "created" : "not yet");
    ConfigMap edge = client.configMaps().inNamespace("team-b").withName("edge").get();
    edge.getData().forEach((node, conf) -> {
      out.printf("  keepalived.conf for %s (ConfigMap team-b/edge):%n", node);
      conf.lines().forEach(line -> out.println("    " + line));
    });
    out.flush();
  }
}
