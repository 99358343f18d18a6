package org.ipamoperators.keepalived.failover;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.keepalived.config.GroupSettings;
import org.ipamoperators.keepalived.config.InstancePlan;
import org.ipamoperators.keepalived.config.InstancePlanner;
import org.ipamoperators.keepalived.config.KeepalivedGroupModel;
import org.ipamoperators.keepalived.config.KeepalivedNode;
import org.ipamoperators.keepalived.config.ServiceVips;
import org.ipamoperators.testsupport.CommandResult;
import org.ipamoperators.testsupport.Commands;
import org.ipamoperators.testsupport.TestBinaries;

/**
 * Measures the VIP takeover time of real keepalived processes in network namespaces, running the configurations
 * the renderer produces: per run, start keepalived on every node, wait for one master, SIGKILL it (a crash, no
 * goodbye advert) and time until the VIP is added on another node ({@code ip monitor}, stamped on arrival). Prints
 * median, p90, min, max per scenario as a Markdown table, and how often the VIP moved a second time (two
 * survivors both took over and one yielded). The crash comes a random 0-1 s after the master is
 * stable (seeded, reproducible), so it falls at a random point between two adverts. Needs root.
 *
 * <pre>
 * mvn -q -B -ntp -pl controller-keepalived -am install -DskipTests
 * mvn -q -B -ntp -pl controller-keepalived exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=org.ipamoperators.keepalived.failover.TakeoverBenchmark -Dexec.args="--runs 20"
 * </pre>
 *
 * Options: {@code --runs N} (default 20), {@code --only name,name} (scenario names as printed).
 */
public final class TakeoverBenchmark {

  private static final Duration CONVERGE = Duration.ofSeconds(30);
  private static final Duration TAKEOVER = Duration.ofSeconds(30);

  private static final List<KeepalivedNode> TWO = List.of(
      KeepalivedNode.of("node-a", "192.0.2.1", "2001:db8::1"),
      KeepalivedNode.of("node-b", "192.0.2.2", "2001:db8::2"));
  private static final List<KeepalivedNode> THREE = List.of(
      KeepalivedNode.of("node-a", "192.0.2.1", "2001:db8::1"),
      KeepalivedNode.of("node-b", "192.0.2.2", "2001:db8::2"),
      KeepalivedNode.of("node-c", "192.0.2.3", "2001:db8::3"));

  private TakeoverBenchmark() {
  }

  /** One measured configuration. */
  record Scenario(String name, String description, List<KeepalivedNode> nodes,
      Function<GroupSettings.Builder, GroupSettings.Builder> settings, List<String> vips) {
  }

  static List<Scenario> scenarios() {
    List<String> manyVips = new ArrayList<>();
    for (int i = 1; i <= 250; i++) {
      manyVips.add("198.51.100." + i);
    }
    return List.of(
        new Scenario("default-ipv4", "our default: VRRPv3, advert 0.1 s, multicast, 2 nodes, IPv4", TWO,
            b -> b, List.of("198.51.100.10")),
        new Scenario("default-ipv6", "our default: VRRPv3, advert 0.1 s, multicast, 2 nodes, IPv6", TWO,
            b -> b, List.of("2001:db8:100::10")),
        new Scenario("default-unicast-3", "our default with unicast: 3 nodes on a bridge, IPv4", THREE,
            b -> b.unicast(true), List.of("198.51.100.10")),
        new Scenario("default-250-vips", "our default, one instance with 250 IPv4 VIPs (16 advertised), time to the"
            + " last VIP in configuration order", TWO, b -> b, manyVips),
        new Scenario("advert-0.05", "VRRPv3, advert 0.05 s, multicast, 2 nodes, IPv4", TWO,
            b -> b.advertInterval(Duration.ofMillis(50)), List.of("198.51.100.10")),
        new Scenario("advert-0.2", "VRRPv3, advert 0.2 s, multicast, 2 nodes, IPv4", TWO,
            b -> b.advertInterval(Duration.ofMillis(200)), List.of("198.51.100.10")),
        new Scenario("advert-0.5", "VRRPv3, advert 0.5 s, multicast, 2 nodes, IPv4", TWO,
            b -> b.advertInterval(Duration.ofMillis(500)), List.of("198.51.100.10")),
        new Scenario("keepalived-default", "keepalived's default: VRRPv2, advert 1 s, multicast, 2 nodes, IPv4", TWO,
            GroupSettings.Builder::keepalivedDefaultTiming, List.of("198.51.100.10")));
  }

  public static void main(String[] args) {
    int runs = 20;
    List<String> only = List.of();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--runs" -> runs = Integer.parseInt(args[++i]);
        case "--only" -> only = Arrays.asList(args[++i].split(","));
        default -> throw new IllegalArgumentException("Unknown option " + args[i] + " (--runs N, --only a,b)");
      }
    }
    System.out.println(environment());
    System.out.println();
    System.out.println("| scenario | runs | median s | p90 s | min s | max s | mean s | VIP moved twice |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
    Map<String, String> descriptions = new TreeMap<>();
    for (Scenario scenario : scenarios()) {
      if (!only.isEmpty() && !only.contains(scenario.name())) {
        continue;
      }
      AtomicInteger moves = new AtomicInteger();
      List<Double> times = run(scenario, runs, moves);
      descriptions.put(scenario.name(), scenario.description());
      List<Double> sorted = times.stream().sorted().toList();
      System.out.printf(Locale.ROOT, "| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %d |%n", scenario.name(),
          sorted.size(), median(sorted), percentile(sorted, 90), sorted.get(0), sorted.get(sorted.size() - 1),
          sorted.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN), moves.get());
    }
    System.out.println();
    descriptions.forEach((name, description) -> System.out.println("- " + name + ": " + description));
  }

  static List<Double> run(Scenario scenario, int runs, AtomicInteger moves) {
    GroupSettings settings = scenario.settings()
        .apply(GroupSettings.builder("keepalived", "bench").interfaceName(VrrpCluster.INTERFACE)).build();
    List<Ip> vips = scenario.vips().stream().map(Ip::parse).toList();
    ServiceVips service = ServiceVips.of("bench/svc", scenario.vips().toArray(String[]::new));
    InstancePlan plan = InstancePlanner.plan(settings, List.of(service), scenario.nodes());
    KeepalivedGroupModel model = plan.withRouterIds(Map.of("bench/svc", 77)).model();
    Ip first = vips.get(0);
    Ip last = vips.get(vips.size() - 1);
    List<Double> times = new ArrayList<>();
    Random random = new Random(scenario.name().hashCode());
    try (VrrpCluster cluster = VrrpCluster.create(scenario.nodes(), TakeoverBenchmark.class)) {
      for (int run = 0; run < runs; run++) {
        cluster.startAll(model);
        String master = cluster.awaitSingleHolder(last, CONVERGE);
        Duration phase = Duration.ofMillis(random.nextInt(1000));
        VrrpCluster.Takeover takeover = cluster.crashAndMeasure(master, last, TAKEOVER, phase);
        times.add(takeover.seconds());
        System.err.printf(Locale.ROOT, "%s run %d: %s -> %s in %.3f s%n", scenario.name(), run + 1, master,
            takeover.newMaster(), takeover.seconds());
        List<String> survivors = cluster.nodes().stream().filter(n -> !n.equals(master)).toList();
        String settled = cluster.awaitSingleHolder(first, survivors, CONVERGE);
        if (!settled.equals(takeover.newMaster())) {
          moves.incrementAndGet();
          System.err.printf(Locale.ROOT, "%s run %d: the VIP moved again, to %s%n", scenario.name(), run + 1,
              settled);
        }
        cluster.stopAll(vips);
      }
    }
    return times;
  }

  static double median(List<Double> sorted) {
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  /** Nearest-rank percentile. */
  static double percentile(List<Double> sorted, int p) {
    int rank = (int) Math.ceil(p / 100.0 * sorted.size());
    return sorted.get(Math.max(0, rank - 1));
  }

  static String environment() {
    String keepalived = firstLine(Commands.run(TestBinaries.fromEnvironment().keepalived().toString(), "--version"));
    String kernel = firstLine(Commands.run("uname", "-r"));
    String cpu = firstLine(Commands.run("sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"));
    String load = firstLine(Commands.run("cat", "/proc/loadavg"));
    return "Machine: " + Runtime.getRuntime().availableProcessors() + " cores (" + cpu.strip() + "), kernel " + kernel
        + ", " + keepalived + ", load average at start: " + load;
  }

  private static String firstLine(CommandResult result) {
    return result.output().lines().findFirst().orElse("?").strip();
  }
}
