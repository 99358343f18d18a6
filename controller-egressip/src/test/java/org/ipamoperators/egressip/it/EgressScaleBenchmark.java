package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.testsupport.StableClasspath;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * The scale benchmark (not part of the default run; a measurement, not a timed assertion): N
 * opted-in namespaces (1,000 by default) created in one burst by 8 threads on 50 nodes in two zones,
 * two /21 CIDRs (/18 beyond 2,000 namespaces), OpenShift SDN explicit mode. The operator runs in a process of its own
 * ({@link EgressOperatorMain}) with the JVM flags below and {@code MALLOC_ARENA_MAX=2} (as the chart
 * should set them), so its CPU and memory are measured alone.
 * Printed: the time from the first namespace created until every namespace has its addresses,
 * its NetNamespace carries them and every address is on exactly one HostSubnet (OVN-Kubernetes: its EgressIP
 * object carries them), also counted from
 * the moment the last namespace existed; the write requests the API server served meanwhile (its
 * own apiserver_request_total, POST/PUT/PATCH/DELETE/APPLY), minus the test's own (each namespace
 * and, on OpenShift SDN, its NetNamespace); the operator's CPU seconds (user+system, from /proc) for the burst and
 * since its start; its peak RSS (VmHWM).
 *
 * <pre>
 * eval "$(bash scripts/test-env.sh)"
 * mvn -B -pl controller-egressip -am verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=EgressScaleBenchmark [-Dipam.scale.namespaces=10000] [-Dipam.scale.jvm="..."]
 *     [-Dipam.scale.network=ovn] [-Dipam.scale.javaHome=<the operator JVM's home, default this one>]
 *     [-Dipam.scale.jarDir=<dir: run the operator from jars only, stable across builds, as CDS needs>]
 *     [-Dipam.scale.classpathAppend=<jars added to the operator's class path: a JCE provider, another transport>]
 *     [-Dipam.scale.ipamJar=<absolute path of distribution/target/ipam.jar>]
 * </pre>
 *
 * <p>{@code -Dipam.scale.ipamJar}: the operator is the product itself, {@code ipam operator --controllers egressip}
 * from that jar (its logging, HTTP endpoints, metrics and audit loop; no leader election), instead of
 * {@link EgressOperatorMain}; the reconcile passes are then not printed.
 *
 * <p>{@code -Dipam.scale.network=ovn}: the cluster serves OVN-Kubernetes' EgressIP API instead of OpenShift
 * SDN's (the SDN CRDs are removed and the EgressIP CRD installed before the operator starts), so the
 * controller writes one EgressIP per namespace and the egress-assignable label on the nodes.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE})
class EgressScaleBenchmark {
  private static final int NAMESPACES = Integer.getInteger("ipam.scale.namespaces", 1000);
  private static final int NODES = Integer.getInteger("ipam.scale.nodes", 50);
  private static final boolean OVN = "ovn".equalsIgnoreCase(System.getProperty("ipam.scale.network", "sdn"));
  /**
   * The operator's JVM flags, as the chart sets them (controllers.egressip.javaToolOptions; docs/benchmarks.md),
   * plus the common pool's parallelism that {@code ipam}'s main sets on 2 processors or fewer (this benchmark starts
   * the controller without that main).
   */
  static final String JVM = System.getProperty("ipam.scale.jvm",
      "-Xms32m -Xmx192m -XX:+UseSerialGC -XX:MaxMetaspaceSize=96m -XX:ReservedCodeCacheSize=32m "
      + "-XX:TieredStopAtLevel=1 -Xss512k -XX:+ExitOnOutOfMemoryError -XX:MinHeapFreeRatio=20 "
      + "-XX:MaxHeapFreeRatio=40 -XX:NewRatio=3 -XX:TrimNativeHeapInterval=2000 "
      + "-Dsun.reflect.inflationThreshold=2147483647 -Djava.util.concurrent.ForkJoinPool.common.parallelism=2");
  private static final Pattern WRITE = Pattern.compile(
      "^apiserver_request_total\\{[^}]*verb=\"(POST|PUT|PATCH|DELETE|APPLY)\"[^}]*\\} ([0-9.e+]+)$", Pattern.MULTILINE);

  private static final Pattern WRITE_BY_RESOURCE = Pattern.compile(
      "^apiserver_request_total\\{([^}]*)\\} ([0-9.e+]+)$", Pattern.MULTILINE);

  /** Requests per "resource[/subresource] VERB", to say where the controller's writes and reads go. */
  static Map<String, Double> requestsByResource(KubernetesClient client) {
    Map<String, Double> out = new TreeMap<>();
    Matcher m = WRITE_BY_RESOURCE.matcher(client.raw("/metrics"));
    while (m.find()) {
      String labels = m.group(1);
      Matcher verb = Pattern.compile("verb=\"([A-Z]+)\"").matcher(labels);
      Matcher resource = Pattern.compile("(?:^|,)resource=\"([^\"]*)\"").matcher(labels);
      Matcher sub = Pattern.compile("subresource=\"([^\"]*)\"").matcher(labels);
      if (verb.find() && resource.find()) {
        String key = resource.group(1) + (sub.find() && !sub.group(1).isEmpty() ? "/" + sub.group(1) : "") + " "
            + verb.group(1);
        out.merge(key, Double.parseDouble(m.group(2)), Double::sum);
      }
    }
    return out;
  }

  private static double writes(KubernetesClient client) {
    String metrics = client.raw("/metrics");
    double total = 0;
    Matcher m = WRITE.matcher(metrics);
    while (m.find()) {
      total += Double.parseDouble(m.group(2));
    }
    return total;
  }

  /** User+system CPU seconds of a process, from /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s). */
  static double cpuSeconds(long pid) throws Exception {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
  }

  /** Peak resident set size in MiB (VmHWM). */
  static double peakRssMiB(long pid) throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
      }
    }
    throw new IllegalStateException("no VmHWM for " + pid);
  }

  static Process startOperator(KubeApiServer server, Path dir) throws Exception {
    Path kubeconfig = dir.resolve("kubeconfig.yaml");
    Files.writeString(kubeconfig, server.kubeconfig());
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("ipam.scale.javaHome", System.getProperty("java.home")), "bin", "java")
        .toString());
    command.addAll(List.of(JVM.trim().split("\\s+")));
    String ipamJar = System.getProperty("ipam.scale.ipamJar");
    String classpath = ipamJar != null ? ipamJar : System.getProperty("java.class.path");
    String extra = System.getProperty("ipam.scale.classpathAppend");
    if (extra != null) {
      classpath = classpath + java.io.File.pathSeparator + extra;
    }
    String jarDir = System.getProperty("ipam.scale.jarDir");
    if (jarDir != null) {
      classpath = StableClasspath.of(classpath, Path.of(jarDir));
    }
    command.addAll(List.of("-cp", classpath));
    command.addAll(ipamJar != null
        ? List.of("org.ipamoperators.cli.IpamCommand", "operator", "--controllers", "egressip", "--kubeconfig",
            kubeconfig.toString(), "--no-leader-election", "--bind-address", "127.0.0.1", "--http-port", "0")
        : List.of(EgressOperatorMain.class.getName(), kubeconfig.toString()));
    ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(dir.resolve("operator.log").toFile());
    b.environment().put("MALLOC_ARENA_MAX", System.getProperty("ipam.scale.mallocArenas", "2"));
    return b.start();
  }

  @Test
  void namespacesOptedInAtOnceOnFiftyNodes(KubeApiServer server, KubernetesClient client) throws Exception {
    if (OVN) {
      servesOvnOnly(client);
    }
    EgressCluster cluster = new EgressCluster(client, "scale", !OVN);
    for (int i = 0; i < NODES; i++) {
      cluster.node("n" + i, Map.of("zone", i % 2 == 0 ? "a" : "b"));
    }
    Path dir = Files.createDirectories(Path.of("target", "egress-scale"));
    Process operator = startOperator(server, dir);
    try {
      String ipam = cluster.n("ipam");
      // Two /21s (2,046 usable each) as in the issue up to 2,000 namespaces; /18s beyond. A node's
      // capacity leaves room for a zone's share (25 nodes each) plus a margin.
      String prefix = NAMESPACES <= 2000 ? "/21" : "/18";
      int capacity = Math.max(60, NAMESPACES / (NODES / 2) + 20);
      cluster.ipam(ipam, "zone", null, capacity, null, cidr("10.64.0.0" + prefix, "a"), cidr("10.72.0.0" + prefix, "b"));
      await().atMost(Duration.ofMinutes(2)).until(() -> {
        EgressIPAM x = client.resources(EgressIPAM.class).withName(ipam).get();
        return x.getStatus() != null && x.getStatus().conditions() != null;
      });
      Thread.sleep(2000);
      double cpuBefore = cpuSeconds(operator.pid());
      double before = writes(client);
      Map<String, Double> byResourceBefore = requestsByResource(client);
      long start = System.nanoTime();
      ExecutorService pool = Executors.newFixedThreadPool(8);
      for (int i = 0; i < NAMESPACES; i++) {
        int n = i;
        pool.submit(() -> cluster.namespace("ns" + n, ipam, null));
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(30, TimeUnit.MINUTES)).isTrue();
      double created = (System.nanoTime() - start) / 1e9;
      await().atMost(Duration.ofMinutes(30)).pollInterval(Duration.ofSeconds(2)).until(() -> done(client, cluster));
      double seconds = (System.nanoTime() - start) / 1e9;
      double after = writes(client);
      Map<String, Double> byResource = requestsByResource(client);
      byResourceBefore.forEach((k, v) -> byResource.merge(k, -v, Double::sum));
      byResource.values().removeIf(v -> v < 0.5);
      double cpu = cpuSeconds(operator.pid());
      double rss = peakRssMiB(operator.pid());
      Map<String, List<String>> hosted = OVN ? Map.of() : cluster.hostedAnywhere(); // OVN places them itself
      assertThat(hosted).allSatisfy((ip, nodes) -> assertThat(nodes).hasSize(1));
      Set<String> all = new HashSet<>();
      for (int i = 0; i < NAMESPACES; i++) {
        for (String ip : cluster.egressIps("ns" + i).split(",")) {
          assertThat(all.add(ip)).as("%s handed out twice", ip).isTrue();
        }
      }
      Map<String, Integer> perNode = new TreeMap<>();
      hosted.forEach((ip, nodes) -> perNode.merge(nodes.get(0), 1, Integer::sum));
      int testWrites = OVN ? NAMESPACES : 2 * NAMESPACES; // each namespace and, on SDN, its NetNamespace
      double controllerWrites = after - before - testWrites;
      System.out.printf("%nSCALE egressip (%s): %d namespaces, %d nodes, JVM [%s]%n"
          + "  all assigned, published and placed %.1f s after the first namespace, %.1f s after the last "
          + "(namespaces created in %.1f s)%n"
          + "  API writes %.0f: test %d, controller %.0f = %.2f per namespace%n"
          + "  operator CPU %.1f s during the burst, %.1f s since its start; peak RSS %.0f MiB%n"
          + "  addresses per node min %d max %d%n", OVN ? "OVN-Kubernetes" : "OpenShift SDN", NAMESPACES, NODES, JVM, seconds, seconds - created, created,
          after - before, testWrites, controllerWrites, controllerWrites / NAMESPACES, cpu - cpuBefore, cpu, rss,
          perNode.values().stream().mapToInt(Integer::intValue).min().orElse(0),
          perNode.values().stream().mapToInt(Integer::intValue).max().orElse(0));
      Map<String, Double> reads = new TreeMap<>(byResource);
      reads.keySet().removeIf(k -> !k.endsWith(" GET") && !k.endsWith(" LIST") && !k.endsWith(" WATCH"));
      byResource.keySet().removeAll(reads.keySet());
      System.out.println("  writes by resource (test's included): " + byResource);
      System.out.println("  reads by resource (test's included): " + reads);
      Files.readAllLines(dir.resolve("operator.log")).stream()
          .filter(l -> l.startsWith("started:") || l.contains("ipam operator started:"))
          .forEach(l -> System.out.println("  operator " + l.substring(l.indexOf("started:"))));
    } finally {
      operator.getOutputStream().close();
      if (System.getProperty("ipam.scale.ipamJar") != null) {
        operator.destroy(); // ipam operator stops on SIGTERM, not on its input closing
      }
      if (!operator.waitFor(20, TimeUnit.SECONDS)) {
        operator.destroyForcibly();
      }
      Files.readAllLines(dir.resolve("operator.log")).stream().filter(l -> l.startsWith("PASSES"))
          .forEach(l -> System.out.println("  " + l));
      cluster.close();
      if (OVN) {
        // put back what the class declares: the extension cleans up its kinds after the test
        ThirdPartyCrd.install(client, ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE);
      }
    }
  }

  /** The cluster serves OVN-Kubernetes' EgressIP API and not OpenShift SDN's (the class installs SDN's CRDs). */
  private static void servesOvnOnly(KubernetesClient client) {
    for (ThirdPartyCrd crd : List.of(ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE)) {
      client.apiextensions().v1().customResourceDefinitions().withName(crd.crdName()).delete();
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> client.getApiGroups().getGroups().stream()
        .noneMatch(g -> g.getName().equals("network.openshift.io")));
    ThirdPartyCrd.install(client, ThirdPartyCrd.EGRESS_IP);
  }

  /**
   * Every namespace annotated with two addresses and each shown where the network reads them: its
   * NetNamespace carrying them and each address on one HostSubnet (SDN), or its EgressIP object (OVN).
   */
  private static boolean done(KubernetesClient client, EgressCluster cluster) {
    Map<String, String> annotated = new TreeMap<>();
    for (var ns : client.namespaces().list().getItems()) {
      var a = ns.getMetadata().getAnnotations();
      if (ns.getMetadata().getName().startsWith("scale-ns") && a != null && a.get(EgressAnnotations.EGRESSIPS) != null) {
        annotated.put(ns.getMetadata().getName(), a.get(EgressAnnotations.EGRESSIPS));
      }
    }
    if (annotated.size() != NAMESPACES) {
      return false;
    }
    if (OVN) {
      int written = 0;
      for (var e : ThirdPartyCrd.EGRESS_IP.resources(client).list().getItems()) {
        String ns = e.getMetadata().getName().substring("egressipam-".length());
        Object spec = e.getAdditionalProperties().get("spec");
        Object ips = spec instanceof Map<?, ?> m ? m.get("egressIPs") : null;
        String want = annotated.get(ns);
        if (want != null && ips instanceof List<?> l && String.join(",", l.stream().map(String::valueOf).toList())
            .equals(want)) {
          written++;
        }
      }
      return written == NAMESPACES;
    }
    int published = 0;
    for (var nn : client.resources(io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace.class)
        .list().getItems()) {
      String want = annotated.get(nn.getMetadata().getName());
      if (want != null && nn.getEgressIPs() != null && String.join(",", nn.getEgressIPs()).equals(want)) {
        published++;
      }
    }
    return published == NAMESPACES && cluster.hostedAnywhere().size() == 2 * NAMESPACES;
  }
}
