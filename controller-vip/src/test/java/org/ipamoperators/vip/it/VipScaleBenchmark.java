package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.testsupport.StableClasspath;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.kube.ServiceRanges;
import org.junit.jupiter.api.Test;

/**
 * The controller-vip scale benchmark (a measurement, not a timed assertion; not part of the default
 * run, whose ITs end in IT). Two runs of {@code ipam.scale.services} LoadBalancer Services (5,000
 * by default), each with a fresh operator in a process of its own ({@link BenchmarkOperator}) that
 * serves one namespace, on this JVM's real kube-apiserver:
 *
 * <ul>
 *   <li><b>catch-up</b>: the Services exist before the operator starts (an upgrade, a restart);
 *   <li><b>burst</b>: the operator runs, then the Services are created at once (16 threads).
 * </ul>
 *
 * <p>Watched with an informer on the Services, so every status change is seen: the time of the
 * first and the last Service served, and any moment at which two Services show one address. At the
 * moment all are served: distinct addresses, claims, and claims whose owner is not the Service
 * showing the address. Writes are the API server's own {@code apiserver_request_total} (POST, PUT,
 * PATCH, DELETE, APPLY; every response code) over the run, the test's own Service creates and the
 * API server's own objects (cluster IPs, leases) left out. CPU seconds and peak RSS are the operator
 * process's ({@code /proc/<pid>/stat}, {@code VmHWM}). Prints one table. Run with
 * {@code mvn -pl controller-vip -am verify -Dit.test=VipScaleBenchmark -Dtest=NONE
 * -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false [-Dipam.scale.services=N]};
 * results go to docs/benchmarks.md by hand. IPBlock's CRD is installed as the chart installs it (every claim reads
 * its address's block). {@code -Dipam.scale.burst=false} runs the catch-up only.
 *
 * <p>{@code -Dipam.scale.metallb=<MetalLB controller binary> -Dipam.scale.metallbCrds=<directory of MetalLB's
 * CRD yaml>} runs the same catch-up with MetalLB's controller instead of ours ({@link MetalLbController}; build
 * it with {@code go install go.universe.tf/metallb/controller@<version>}, its CRDs are its repository's
 * {@code config/crd/bases}): the same Services, their range as an IPAddressPool in their namespace, the same
 * watch, writes counted the same way (MetalLB's own: Service status, Events, pool status), the CPU and peak RSS
 * of its process; claims do not apply. Times from caches synced are from controller-runtime's "Starting workers"
 * line of its Service controller; its output goes to {@code target/vip-scale-benchmark-metallb.log}. No burst run.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml", "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class VipScaleBenchmark {
  private static final int SERVICES = Integer.getInteger("ipam.scale.services", 5000);
  /** {@code -Dipam.scale.burst=false}: the catch-up only (for profiling iterations). */
  private static final boolean BURST = !"false".equals(System.getProperty("ipam.scale.burst"));
  /** {@code -Dipam.scale.metallb} and {@code -Dipam.scale.metallbCrds}: MetalLB's controller instead of ours. */
  private static final MetalLbController METALLB = System.getProperty("ipam.scale.metallb") == null ? null
      : new MetalLbController(Path.of(System.getProperty("ipam.scale.metallb")),
          Path.of(System.getProperty("ipam.scale.metallbCrds", "missing -Dipam.scale.metallbCrds")));
  private static final Pattern REQUEST = Pattern.compile("^apiserver_request_total\\{([^}]*)\\} ([0-9.e+]+)$",
      Pattern.MULTILINE);
  private static final Pattern LABEL = Pattern.compile("([a-z_]+)=\"([^\"]*)\"");
  /** The API server's own writes in a run: cluster IPs of the Services, leases. */
  private static final Set<String> NOT_OURS = Set.of("ipaddresses", "leases", "servicecidrs", "servicecidrs/status",
      "namespaces", "endpoints", "endpointslices");

  /** Write requests so far by resource[/subresource] and verb. */
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
      String key = labels.getOrDefault("resource", "") + (sub.isEmpty() ? "" : "/" + sub) + " " + verb;
      out.merge(key, Double.parseDouble(m.group(2)), Double::sum);
    }
    return out;
  }

  private static Map<String, Double> delta(Map<String, Double> before, Map<String, Double> after) {
    Map<String, Double> d = new TreeMap<>();
    after.forEach((k, v) -> {
      double x = v - before.getOrDefault(k, 0.0);
      if (x > 0) {
        d.put(k, x);
      }
    });
    return d;
  }

  /** Every status change of the Services of one namespace, checked for one address on two Services. */
  private static final class Watch implements ResourceEventHandler<Service> {
    final Map<String, String> shown = new HashMap<>();
    final Map<String, Set<String>> byAddress = new HashMap<>();
    final Set<String> doubled = new HashSet<>();
    long firstServed;
    long allServed;
    Map<String, String> atAllServed;

    @Override
    public synchronized void onAdd(Service s) {
      update(s);
    }

    @Override
    public synchronized void onUpdate(Service o, Service s) {
      update(s);
    }

    @Override
    public synchronized void onDelete(Service s, boolean unknown) {
    }

    private void update(Service s) {
      String name = s.getMetadata().getName();
      String ip = s.getStatus() == null || s.getStatus().getLoadBalancer() == null
          || s.getStatus().getLoadBalancer().getIngress() == null || s.getStatus().getLoadBalancer().getIngress().isEmpty()
          ? null : s.getStatus().getLoadBalancer().getIngress().get(0).getIp();
      String old = ip == null ? shown.remove(name) : shown.put(name, ip);
      if (old != null) {
        byAddress.getOrDefault(old, new HashSet<>()).remove(name);
      }
      if (ip != null) {
        Set<String> on = byAddress.computeIfAbsent(ip, k -> new HashSet<>());
        on.add(name);
        if (on.size() > 1) {
          doubled.add(ip);
        }
        if (firstServed == 0) {
          firstServed = System.currentTimeMillis();
        }
      }
      if (shown.size() == SERVICES && allServed == 0) {
        allServed = System.currentTimeMillis();
        atAllServed = new HashMap<>(shown);
        notifyAll();
      }
    }

    synchronized void awaitAll(long timeoutMs, Process serving) throws InterruptedException {
      long end = System.currentTimeMillis() + timeoutMs;
      while (allServed == 0 && System.currentTimeMillis() < end && serving.isAlive()) {
        wait(1000);
      }
    }
  }

  private record Row(String mode, int services, double syncedAfter, double firstServed, double allServed,
      double allServedFromStart, int doubledEver, int distinctAtEnd, int claims, int wrongOwner, double writes, double cpu, double rssMb,
      Map<String, Double> byResource) {}

  private static final List<Row> ROWS = new ArrayList<>();

  @Test
  void catchUpAndBurst(KubeApiServer server, KubernetesClient client) throws Exception {
    Path kubeconfig = Files.createTempFile("vip-benchmark", ".kubeconfig");
    Files.writeString(kubeconfig, server.kubeconfig());
    VipCluster cluster = new VipCluster(client);
    ServiceRanges.add(client, "vip-scale-benchmark", "10.2.0.0/17"); // left to the throw-away apiserver
    String ns = client.getNamespace();
    String other = ns + "-burst";
    client.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata()
        .withName(other).endMetadata().build()).create();
    if (METALLB != null) {
      METALLB.install(client, ns, "198.18.0.0/18");
    } else {
      cluster.groupOf("catch-up", List.of("198.18.0.0/18"), null, Map.of("run", "catch-up"));
      cluster.groupOf("burst", List.of("198.18.64.0/18"), null, Map.of("run", "burst"));
    }
    System.out.printf("load average at the start: %s%n", Files.readString(Path.of("/proc/loadavg")).trim());
    try {
      // Catch-up: the Services first, then the operator.
      create(client, ns, "catch-up");
      ROWS.add(run(client, kubeconfig, ns, "catch-up", false));
      // Burst: the operator first (the catch-up's claims are in the cluster: it reads them at start).
      if (BURST && METALLB == null) {
        ROWS.add(run(client, kubeconfig, other, "burst", true));
      }
    } finally {
      Files.deleteIfExists(kubeconfig);
    }
    System.out.printf("load average at the end: %s%n", Files.readString(Path.of("/proc/loadavg")).trim());
    System.out.println();
    System.out.println("| run | Services | caches synced after s | first served s | all served s | all served from process start s"
        + " | addresses ever on two Services | distinct addresses | claims | claims not owned by the Service showing them"
        + " | controller writes | per Service | operator CPU s (process start on) | per Service ms | peak RSS MiB |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (Row r : ROWS) {
      System.out.printf("| %s | %,d | %.1f | %.1f | %.1f | %.1f | %d | %,d | %s | %s | %,.0f | %.2f | %.1f | %.2f | %.0f |%n",
          r.mode(), r.services(), r.syncedAfter(), r.firstServed(), r.allServed(), r.allServedFromStart(),
          r.doubledEver(), r.distinctAtEnd(), r.claims() < 0 ? "n/a" : String.format("%,d", r.claims()),
          r.wrongOwner() < 0 ? "n/a" : Integer.toString(r.wrongOwner()), r.writes(), r.writes() / r.services(), r.cpu(),
          r.cpu() * 1e3 / r.services(), r.rssMb());
    }
    for (Row r : ROWS) {
      System.out.printf("%s writes by resource: %s%n", r.mode(), r.byResource());
    }
    System.out.println("(catch-up: times from the operator's caches synced; burst: from the first Service created;"
        + " the CPU is the operator process's, start-up included)");
    for (Row r : ROWS) {
      assertThat(r.doubledEver()).as(r.mode() + ": addresses ever shown by two Services").isZero();
      if (METALLB == null) {
        assertThat(r.wrongOwner()).as(r.mode() + ": claims not owned by the Service showing them").isZero();
      } else {
        assertThat(r.distinctAtEnd()).as(r.mode() + ": distinct addresses").isEqualTo(r.services());
      }
    }
  }

  private static void create(KubernetesClient client, String ns, String run) throws Exception {
    VipCluster c = new VipCluster(client);
    ExecutorService pool = Executors.newFixedThreadPool(16);
    long start = System.nanoTime();
    for (int i = 0; i < SERVICES; i++) {
      String name = "svc-" + i;
      pool.submit(() -> client.services().inNamespace(ns).resource(c.lb(name).editMetadata()
          .withLabels(Map.of("run", run)).endMetadata().build()).create());
    }
    pool.shutdown();
    assertThat(pool.awaitTermination(60, TimeUnit.MINUTES)).isTrue();
    System.out.printf("%s: %d Services created in %.1f s%n", run, SERVICES, (System.nanoTime() - start) / 1e9);
  }

  private static Row run(KubernetesClient client, Path kubeconfig, String ns, String run, boolean burst)
      throws Exception {
    Watch watch = new Watch();
    SharedIndexInformer<Service> informer = client.services().inNamespace(ns).inform(watch);
    ProcessBuilder pb = METALLB == null ? ourOperator(kubeconfig, ns, run)
        : new ProcessBuilder(METALLB.command(kubeconfig, ns));
    pb.redirectErrorStream(true);
    // e.g. -Dipam.scale.operatorEnv=MALLOC_ARENA_MAX=2 (comma-separated NAME=VALUE pairs), as the chart sets it
    for (String pair : System.getProperty("ipam.scale.operatorEnv", "").split(",")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        pb.environment().put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
      }
    }
    Process operator = pb.start();
    long started = System.currentTimeMillis();
    try {
      Map<String, Double> before = writes(client);
      BufferedReader out = new BufferedReader(new InputStreamReader(operator.getInputStream(), StandardCharsets.UTF_8));
      AtomicLong syncedAt = new AtomicLong();
      if (METALLB == null) {
        syncedAt.set(awaitSynced(out));
        CompletableFuture.runAsync(() -> out.lines().forEach(l -> { })); // keep its output drained
      } else {
        CompletableFuture.runAsync(() -> followMetalLb(out, syncedAt));
      }
      long from = syncedAt.get();
      if (burst) {
        before = writes(client);
        from = System.currentTimeMillis();
        create(client, ns, run);
      }
      watch.awaitAll(60 * 60_000L, operator);
      assertThat(watch.allServed).as("all served").isPositive();
      Map<String, Double> d = delta(before, writes(client));
      double cpu = cpuSeconds(operator.pid());
      double rss = peakRssMb(operator.pid());
      long synced = syncedAt.get();
      if (!burst) {
        from = synced;
      }
      int[] claims = METALLB == null ? claims(client, ns, watch.atAllServed) : new int[] {-1, -1};
      Map<String, Double> ours = new TreeMap<>();
      d.forEach((k, v) -> {
        String resource = k.substring(0, k.indexOf(' '));
        if (!NOT_OURS.contains(resource)) {
          ours.put(k, v);
        }
      });
      if (burst) {
        ours.merge("services POST", (double) -SERVICES, Double::sum); // the benchmark's own creates
        ours.remove("services POST", 0.0);
      }
      double total = ours.values().stream().mapToDouble(Double::doubleValue).sum();
      double sinceFrom = from == 0 ? Double.NaN : 1e3;
      return new Row(METALLB == null ? run : run + " (MetalLB)", SERVICES,
          synced == 0 ? Double.NaN : (synced - started) / 1e3, (watch.firstServed - from) / sinceFrom,
          (watch.allServed - from) / sinceFrom, (watch.allServed - started) / 1e3, watch.doubled.size(),
          new HashSet<>(watch.atAllServed.values()).size(), claims[0], claims[1], total, cpu, rss, ours);
    } finally {
      informer.close();
      operator.getOutputStream().close();
      if (METALLB != null) {
        operator.destroy(); // MetalLB's controller runs until a signal
      }
      if (!operator.waitFor(30, TimeUnit.SECONDS)) {
        operator.destroyForcibly();
      }
    }
  }

  /** Our operator's command line ({@link BenchmarkOperator}). */
  private static ProcessBuilder ourOperator(Path kubeconfig, String ns, String run) throws java.io.IOException {
    // -Dipam.scale.javaHome: the operator's runtime; -Dipam.scale.jarDir: its class path as stable jars, which a
    // class-data archive (-XX:AOTCache, -XX:SharedArchiveFile) needs.
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("ipam.scale.javaHome", System.getProperty("java.home")), "bin", "java").toString()));
    String jvm = System.getProperty("ipam.scale.operatorJvmArgs", ""); // e.g. a flight recording
    if (!jvm.isBlank()) {
      command.addAll(List.of(jvm.replace("{run}", run).trim().split("\\s+")));
    }
    String classpath = System.getProperty("java.class.path");
    String jarDir = System.getProperty("ipam.scale.jarDir");
    if (jarDir != null) {
      classpath = StableClasspath.of(classpath, Path.of(jarDir));
    }
    command.addAll(List.of("-cp", classpath, BenchmarkOperator.class.getName(), kubeconfig.toString(), ns));
    return new ProcessBuilder(command);
  }

  /** The time of our operator's {@code SYNCED <epoch ms>} line. */
  private static long awaitSynced(BufferedReader out) throws Exception {
    long synced = 0;
    for (String line; (line = out.readLine()) != null; ) {
      if (line.startsWith("SYNCED ")) {
        synced = Long.parseLong(line.substring(7).trim());
        break;
      }
    }
    assertThat(synced).as("operator started").isPositive();
    return synced;
  }

  /** MetalLB's output to a file (its log is the only sign of its caches synced), noting when they are. */
  private static void followMetalLb(BufferedReader out, AtomicLong syncedAt) {
    try (var log = Files.newBufferedWriter(Path.of("target", "vip-scale-benchmark-metallb.log"))) {
      for (String line; (line = out.readLine()) != null; ) {
        if (syncedAt.get() == 0 && MetalLbController.isSynced(line)) {
          syncedAt.set(System.currentTimeMillis());
        }
        log.write(line);
        log.newLine();
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Claims of the namespace's Services, and those not owned by the Service showing their address. */
  private static int[] claims(KubernetesClient client, String ns, Map<String, String> shown) {
    Map<String, String> owners = new HashMap<>();
    int claims = 0;
    for (IPClaim c : client.resources(IPClaim.class).list().getItems()) {
      if (ns.equals(c.getSpec().owner().namespace())) {
        claims++;
        owners.put(c.getSpec().address(), c.getSpec().owner().name());
      }
    }
    int wrong = 0;
    for (Map.Entry<String, String> e : shown.entrySet()) {
      if (!e.getKey().equals(owners.get(e.getValue()))) {
        wrong++;
      }
    }
    return new int[] {claims, wrong};
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
