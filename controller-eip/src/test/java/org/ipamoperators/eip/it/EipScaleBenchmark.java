package org.ipamoperators.eip.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Address;

/**
 * The controller-eip scale benchmark (a measurement, not a timed assertion; not part of the default run, whose ITs
 * end in IT). {@code ipam.scale.pods} pods (200 by default) labelled manage and {@code autocreate_eip=true}, ten to
 * a node, each with a VPC address of its own (the primary address of an ENI attached to its node's instance in
 * moto), are created at once (16 threads: the pod, then its IP through the status subresource: there is no
 * kubelet) while the operator runs in a process of its own ({@link EipBenchmarkOperator}, serving one namespace)
 * against this JVM's real kube-apiserver and moto. Measured: time from the first pod created to every autocreated
 * Eip associated (Ready=True, an association id; and then checked in moto: N addresses, each on its pod's IP); the
 * operator's EC2 calls per Eip (counted in its client); the API server's write requests per Eip
 * ({@code apiserver_request_total}, POST/PUT/PATCH/DELETE/APPLY, the benchmark's own pod creates and status writes
 * left out); the operator's CPU seconds and peak RSS ({@code /proc}). Then the pods are deleted (gracefully: they
 * stay terminating, as on a node) and the time until every address is released and every Eip gone. Run with
 * {@code mvn -pl controller-eip -am verify -Dit.test=EipScaleBenchmark -Dtest=NONE
 * -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false [-Dipam.scale.pods=N]}.
 */
@KubeApiTest(crds = {"META-INF/fabric8/eips.materialize.cloud-v1.yml",
    "META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml"})
@MotoTest
class EipScaleBenchmark {
  private static final int PODS = Integer.getInteger("ipam.scale.pods", 200);
  private static final int PODS_PER_NODE = 10;
  private static final Pattern REQUEST = Pattern.compile("^apiserver_request_total\\{([^}]*)\\} ([0-9.e+]+)$",
      Pattern.MULTILINE);
  private static final Pattern LABEL = Pattern.compile("([a-z_]+)=\"([^\"]*)\"");
  private static final Set<String> NOT_OURS = Set.of("leases", "namespaces", "endpoints", "endpointslices",
      "ipaddresses", "serviceaccounts", "nodes/status");

  private static Map<String, Double> writes(KubernetesClient client) {
    Map<String, Double> out = new TreeMap<>();
    Matcher m = REQUEST.matcher(client.raw("/metrics"));
    while (m.find()) {
      Map<String, String> labels = new TreeMap<>();
      Matcher l = LABEL.matcher(m.group(1));
      while (l.find()) {
        labels.put(l.group(1), l.group(2));
      }
      String verb = labels.getOrDefault("verb", "");
      if (!Set.of("POST", "PUT", "PATCH", "DELETE", "APPLY").contains(verb)) {
        continue;
      }
      String sub = labels.getOrDefault("subresource", "");
      String resource = labels.getOrDefault("resource", "") + (sub.isEmpty() ? "" : "/" + sub);
      if (!NOT_OURS.contains(resource)) {
        out.merge(resource + " " + verb, Double.parseDouble(m.group(2)), Double::sum);
      }
    }
    return out;
  }

  private static Map<String, Double> delta(Map<String, Double> before, Map<String, Double> after) {
    Map<String, Double> d = new TreeMap<>();
    after.forEach((k, v) -> {
      double x = v - before.getOrDefault(k, 0.0);
      if (x > 0.5) {
        d.put(k, x);
      }
    });
    return d;
  }

  /** Eips associated (Ready=True with an association), by name, and when the last one got there. */
  private static final class Watch implements ResourceEventHandler<Eip> {
    final Map<String, Long> associated = new ConcurrentHashMap<>();

    private void seen(Eip e) {
      boolean ready = e.getStatus() != null && e.getStatus().associationId() != null
          && e.getStatus().conditions() != null && e.getStatus().conditions().stream()
              .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
      if (ready) {
        associated.putIfAbsent(e.getMetadata().getName(), System.currentTimeMillis());
      }
    }

    @Override
    public void onAdd(Eip e) {
      seen(e);
    }

    @Override
    public void onUpdate(Eip old, Eip e) {
      seen(e);
    }

    @Override
    public void onDelete(Eip e, boolean unknown) {
    }
  }

  @Test
  void autocreatedEipsForABurstOfPods(KubeApiServer server, KubernetesClient client, MotoServer moto,
      Ec2Client ec2) throws Exception {
    String ns = client.getNamespace();
    String load = Files.readString(Path.of("/proc/loadavg")).trim();
    // EC2: one VPC, an instance per ten pods, an ENI per pod whose primary address is the pod's IP.
    String vpc = ec2.createVpc(r -> r.cidrBlock("10.0.0.0/16")).vpc().vpcId();
    String nodeSubnet = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock("10.0.1.0/24").availabilityZone("us-east-1a"))
        .subnet().subnetId();
    String podSubnet = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock("10.0.16.0/20").availabilityZone("us-east-1a"))
        .subnet().subnetId();
    int nodes = (PODS + PODS_PER_NODE - 1) / PODS_PER_NODE;
    List<String> podIps = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      String hostIp = "10.0.1." + (10 + n);
      var i = ec2.runInstances(r -> r.imageId("ami-12c6146b").instanceType("m5.24xlarge").subnetId(nodeSubnet)
          .privateIpAddress(hostIp).minCount(1).maxCount(1)).instances().get(0);
      String name = ns + "-bench-" + n;
      var node = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata()
          .withNewSpec().withProviderID("aws:///us-east-1a/" + i.instanceId()).endSpec().build()).create();
      node.setStatus(new NodeStatusBuilder().addNewAddress().withType("InternalIP").withAddress(hostIp).endAddress()
          .withConditions(new NodeConditionBuilder().withType("Ready").withStatus("True")
              .withLastTransitionTime(Instant.now().toString()).build()).build());
      client.nodes().resource(node).updateStatus();
      for (int k = 0; k < PODS_PER_NODE && podIps.size() < PODS; k++) {
        int p = podIps.size();
        String ip = "10.0." + (16 + (p + 10) / 250) + "." + ((p + 10) % 250 + 2);
        String eni = ec2.createNetworkInterface(r -> r.subnetId(podSubnet).privateIpAddress(ip)).networkInterface()
            .networkInterfaceId();
        int device = k + 1;
        ec2.attachNetworkInterface(r -> r.networkInterfaceId(eni).instanceId(i.instanceId()).deviceIndex(device));
        podIps.add(ip);
      }
    }
    int addressesBefore = ec2.describeAddresses().addresses().size();

    Path kubeconfig = Files.createTempFile("eip-benchmark", ".kubeconfig");
    Files.writeString(kubeconfig, server.kubeconfig());
    Watch watch = new Watch();
    SharedIndexInformer<Eip> informer = client.resources(Eip.class).inNamespace(ns).inform(watch);
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    String jvm = System.getProperty("ipam.scale.operatorJvmArgs", "");
    if (!jvm.isBlank()) {
      command.addAll(List.of(jvm.trim().split("\\s+")));
    }
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), EipBenchmarkOperator.class.getName(),
        kubeconfig.toString(), ns, moto.endpoint().toString()));
    long launched = System.currentTimeMillis();
    Process operator = new ProcessBuilder(command).redirectErrorStream(true).start();
    String calls = null;
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(operator.getInputStream(), StandardCharsets.UTF_8));
      long synced = 0;
      for (String line; (line = out.readLine()) != null; ) {
        if (line.startsWith("SYNCED ")) {
          synced = Long.parseLong(line.substring(7).trim());
          break;
        }
      }
      assertThat(synced).as("operator started").isPositive();
      CompletableFuture<String> callsLine = CompletableFuture.supplyAsync(
          () -> out.lines().filter(l -> l.startsWith("CALLS ")).findFirst().orElse("CALLS ?"));
      Thread.sleep(2000); // the start-up sweep and quota reading, counted with the rest
      Map<String, Double> before = writes(client);

      // The burst: every pod created, then given its IP.
      long start = System.currentTimeMillis();
      ExecutorService pool = Executors.newFixedThreadPool(16);
      for (int p = 0; p < PODS; p++) {
        String name = "app-" + p;
        String node = ns + "-bench-" + (p / PODS_PER_NODE);
        String ip = podIps.get(p);
        pool.submit(() -> {
          Pod pod = client.pods().resource(new PodBuilder().withNewMetadata().withName(name)
              .withLabels(Map.of(EipNames.MANAGE_LABEL, "true", EipNames.AUTOCREATE_LABEL, "true")).endMetadata()
              .withNewSpec().withNodeName(node).withAutomountServiceAccountToken(false).addNewContainer()
              .withName("c").withImage("registry.invalid/app:1").endContainer().endSpec().build()).create();
          pod.setStatus(new PodStatusBuilder().withPhase("Running").withPodIP(ip).withPodIPs(new PodIP(ip)).build());
          client.pods().resource(pod).updateStatus();
          return null;
        });
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(30, TimeUnit.MINUTES)).isTrue();
      long created = System.currentTimeMillis();
      while (watch.associated.size() < PODS && System.currentTimeMillis() - start < 30 * 60_000L) {
        Thread.sleep(100);
      }
      assertThat(watch.associated).as("Eips associated").hasSize(PODS);
      long allAssociated = watch.associated.values().stream().mapToLong(Long::longValue).max().orElseThrow();
      long firstAssociated = watch.associated.values().stream().mapToLong(Long::longValue).min().orElseThrow();
      Map<String, Double> d = delta(before, writes(client));
      d.merge("pods POST", (double) -PODS, Double::sum);
      d.merge("pods/status PUT", (double) -PODS, Double::sum);
      d.values().removeIf(v -> v < 0.5);
      double createWrites = d.values().stream().mapToDouble(Double::doubleValue).sum();
      double cpu = cpuSeconds(operator.pid());
      double rss = peakRssMb(operator.pid());
      List<Address> addresses = ec2.describeAddresses().addresses();
      assertThat(addresses).hasSize(addressesBefore + PODS);
      assertThat(addresses.stream().map(Address::privateIpAddress).filter(podIps::contains).distinct().count())
          .as("addresses each on its own pod IP").isEqualTo(PODS);

      // Release: the pods go (terminating, as with a kubelet's grace period).
      Map<String, Double> beforeDelete = writes(client);
      long deleteStart = System.currentTimeMillis();
      client.pods().inNamespace(ns).withLabel(EipNames.AUTOCREATE_LABEL).delete();
      while ((ec2.describeAddresses().addresses().size() > addressesBefore
          || !client.resources(Eip.class).inNamespace(ns).list().getItems().isEmpty())
          && System.currentTimeMillis() - deleteStart < 30 * 60_000L) {
        Thread.sleep(250);
      }
      long released = System.currentTimeMillis();
      assertThat(ec2.describeAddresses().addresses()).as("none leaked").hasSize(addressesBefore);
      Map<String, Double> dd = delta(beforeDelete, writes(client));
      dd.merge("pods DELETE", (double) -1, Double::sum); // the benchmark's one collection delete
      dd.values().removeIf(v -> v < 0.5);
      double deleteWrites = dd.values().stream().mapToDouble(Double::doubleValue).sum();
      double cpuTotal = cpuSeconds(operator.pid());
      double rssTotal = peakRssMb(operator.pid());

      operator.getOutputStream().close();
      calls = callsLine.get(60, TimeUnit.SECONDS);
      System.out.printf("%nload average at the start: %s; at the end: %s%n", load,
          Files.readString(Path.of("/proc/loadavg")).trim());
      System.out.printf("operator: caches synced %.1f s after launch%n", (synced - launched) / 1e3);
      System.out.println("| pods (autocreate) | pods created in s | first associated s | all associated s |"
          + " controller writes | per Eip | operator CPU s | peak RSS MiB | all released after delete s |"
          + " writes for release per Eip | CPU s, whole run | peak RSS MiB, whole run |");
      System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
      System.out.printf("| %d | %.1f | %.1f | %.1f | %.0f | %.2f | %.1f | %.0f | %.1f | %.2f | %.1f | %.0f |%n", PODS,
          (created - start) / 1e3, (firstAssociated - start) / 1e3, (allAssociated - start) / 1e3, createWrites,
          createWrites / PODS, cpu, rss, (released - deleteStart) / 1e3, deleteWrites / PODS, cpuTotal, rssTotal);
      System.out.println("writes by resource (create): " + d);
      System.out.println("writes by resource (release): " + dd);
      System.out.println("EC2 calls of the whole run (start-up sweep included): " + calls.substring(6));
      Map<String, Integer> byOp = new TreeMap<>();
      Matcher m = Pattern.compile("(\\w+)=(\\d+)").matcher(calls);
      int total = 0;
      while (m.find()) {
        byOp.put(m.group(1), Integer.parseInt(m.group(2)));
        total += Integer.parseInt(m.group(2));
      }
      System.out.printf("EC2 calls per Eip (create and release): %.2f%n", total / (double) PODS);
    } finally {
      informer.close();
      if (operator.isAlive()) {
        operator.getOutputStream().close();
        if (!operator.waitFor(30, TimeUnit.SECONDS)) {
          operator.destroyForcibly();
        }
      }
      Files.deleteIfExists(kubeconfig);
      for (int n = 0; n < nodes; n++) {
        client.nodes().withName(ns + "-bench-" + n).delete();
      }
    }
  }

  /** User plus system CPU time of a process, from /proc (clock ticks of 1/100 s). */
  private static double cpuSeconds(long pid) throws Exception {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
  }

  private static double peakRssMb(long pid) throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
      }
    }
    return -1;
  }
}
