package org.ipamoperators.egressip.plan;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.failover.HealthObservation;
import org.ipamoperators.core.placement.PlacementOptions;
import org.ipamoperators.egressip.EgressFacts;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAMSpec;

/**
 * Where the pure part of one reconcile pass spends its time at scale (a measurement, not a test):
 * N namespaces already served (two addresses each, published), 2N of this IPAM's claims, 50 nodes in
 * two zones hosting what the plan placed, then K new namespaces. Prints the median of several runs of
 * each step. Run with the test classpath:
 *
 * <pre>
 * java -XX:TieredStopAtLevel=1 -cp ... org.ipamoperators.egressip.plan.EgressPassProfile [N] [K] [runs]
 * </pre>
 */
public final class EgressPassProfile {
  private EgressPassProfile() {}

  private static double placementMs;

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    int k = args.length > 1 ? Integer.parseInt(args[1]) : 100;
    int runs = args.length > 2 ? Integer.parseInt(args[2]) : 7;
    EgressIPAMSpec spec = new EgressIPAMSpec(List.of(new CIDRAssignment("10.64.0.0/18", "a", null),
        new CIDRAssignment("10.72.0.0/18", "b", null)), "zone", null, null, 420, null);
    String ipam = "scale";
    String pool = EgressPolicy.pool(ipam);
    List<NodeFacts> bare = nodes(Map.of());
    List<NamespaceState> fresh = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      fresh.add(new NamespaceState("ns" + i, "u" + i, null, null));
    }
    EgressInputs first = new EgressInputs(ipam, spec, fresh, List.of(), bare,
        EgressInputs.PlatformNetwork.BARE_METAL, Map.of());
    EgressPlan initial = EgressPolicy.decide(first, Map.of(), Instant.EPOCH).plan();
    // The steady state: every namespace published, its claims in the ledger, placed on its nodes.
    List<NamespaceState> served = new ArrayList<>();
    List<ClaimFact> claims = new ArrayList<>();
    List<Namespace> objects = new ArrayList<>();
    initial.served().forEach((ns, ips) -> {
      String value = String.join(",", ips.stream().map(Ip::toString).toList());
      served.add(new NamespaceState(ns, "u-" + ns, value, value));
      ips.forEach(ip -> claims.add(new ClaimFact(ip, pool, ns, "Namespace " + ns, false, Instant.EPOCH)));
      objects.add(new NamespaceBuilder().withNewMetadata().withName(ns).withResourceVersion("1")
          .withAnnotations(Map.of(EgressAnnotations.EGRESSIPAM, ipam, EgressAnnotations.EGRESSIPS, value,
              EgressAnnotations.EGRESSIPS_PUBLISHED, value)).endMetadata().build());
    });
    List<NodeFacts> placed = nodes(initial.placement().assignments());
    List<NamespaceState> withNew = new ArrayList<>(served);
    for (int i = 0; i < k; i++) {
      withNew.add(new NamespaceState("new" + i, "v" + i, null, null));
    }
    EgressInputs steady = new EgressInputs(ipam, spec, served, claims, placed,
        EgressInputs.PlatformNetwork.BARE_METAL, Map.of());
    EgressInputs burst = new EgressInputs(ipam, spec, withNew, claims, placed,
        EgressInputs.PlatformNetwork.BARE_METAL, Map.of());
    List<NodeInfo> infos = EgressPolicy.decide(steady, Map.of(), Instant.EPOCH).nodes();
    List<ClaimState> states = claims.stream()
        .map(c -> new ClaimState(c.address(), c.ownerName(), null, true, c.created())).toList();

    System.out.printf("EgressPassProfile: %d namespaces served, %d new, %d claims, %d nodes; median of %d runs%n",
        served.size(), k, claims.size(), placed.size(), runs);
    Map<String, Supplier<Object>> steps = new LinkedHashMap<>();
    steps.put("NamespaceState from N Namespace objects", () -> objects.stream().map(EgressFacts::namespace).toList());
    steps.put("Ip.parse of every egressips value (2N)", () -> {
      List<Ip> out = new ArrayList<>();
      served.forEach(s -> Arrays.stream(s.egressIps().split(",")).map(Ip::parse).forEach(out::add));
      return out;
    });
    steps.put("EgressPlanner.plan, steady (no change)", () -> EgressPlanner.plan(spec, served, states, infos,
        PlacementOptions.DEFAULT));
    steps.put("EgressPolicy.decide, steady (no change)", () -> EgressPolicy.decide(steady, Map.of(), Instant.EPOCH));
    steps.put("EgressPolicy.decide, " + k + " new namespaces", () -> EgressPolicy.decide(burst, Map.of(),
        Instant.EPOCH));
    steps.put("  of which: claims sorted, pools and allocators claimed", () -> {
      List<ClaimState> ordered = new ArrayList<>(states);
      ordered.sort(java.util.Comparator.comparing(ClaimState::address));
      List<org.ipamoperators.core.allocation.Allocator> allocators = new ArrayList<>();
      List<org.ipamoperators.core.pool.Pool> pools = new ArrayList<>();
      for (CIDRAssignment c : spec.cidrs()) {
        var p = org.ipamoperators.core.pool.Pool.of(c.cidr(), List.of(c.cidr()), c.reservedOrEmpty());
        pools.add(p);
        allocators.add(org.ipamoperators.core.allocation.Allocator.create(p,
            org.ipamoperators.core.allocation.AllocatorOptions.of(
                org.ipamoperators.core.allocation.AllocationStrategy.FIRST_FREE)));
      }
      Map<Ip, String> takenBy = new HashMap<>();
      for (ClaimState c : ordered) {
        int idx = EgressPlanner.cidrIndex(pools, c.address());
        allocators.get(idx).claim(c.address());
        takenBy.put(c.address(), "namespace " + c.namespace());
      }
      return takenBy;
    });
    steps.put("  of which: PlacementPlanner.plan of 2N demands", () -> {
      List<org.ipamoperators.core.placement.IpDemand> demands = new ArrayList<>();
      List<org.ipamoperators.core.placement.NodeState> nodeStates = new ArrayList<>();
      served.forEach(s -> {
        String[] parts = s.egressIps().split(",");
        for (int i = 0; i < parts.length; i++) {
          demands.add(new org.ipamoperators.core.placement.IpDemand(Ip.parse(parts[i]), i == 0 ? "a" : "b", s.name()));
        }
      });
      infos.forEach(x -> nodeStates.add(new org.ipamoperators.core.placement.NodeState(x.name(), x.topologyValue(),
          true, x.capacity(), x.hosting())));
      long t = System.nanoTime();
      var r = org.ipamoperators.core.placement.PlacementPlanner.plan(nodeStates, demands, PlacementOptions.DEFAULT);
      placementMs = (System.nanoTime() - t) / 1e6;
      return r;
    });
    EgressPlanner.Memory memory = EgressPolicy.decide(steady, Map.of(), Instant.EPOCH).memory();
    steps.put("incremental EgressPolicy.decide, steady (no change)", () -> EgressPolicy.decide(steady, Map.of(),
        Instant.EPOCH, memory));
    steps.put("incremental EgressPolicy.decide, " + k + " new namespaces", () -> EgressPolicy.decide(burst, Map.of(),
        Instant.EPOCH, memory));
    EgressPlan steadyPlan = EgressPolicy.decide(steady, Map.of(), Instant.EPOCH).plan();
    steps.put("EgressPolicy.networkWrite", () -> EgressPolicy.networkWrite(ipam, spec, steadyPlan,
        steadyPlan.served(), Set.of(), infos, false));
    steps.put("NetworkWrite.ours of every served address (2N)", () -> {
      var w = EgressPolicy.networkWrite(ipam, spec, steadyPlan, steadyPlan.served(), Set.of(), infos, false);
      int c = 0;
      for (List<Ip> ips : steadyPlan.served().values()) {
        for (Ip ip : ips) {
          c += w.ours(ip.toString()) ? 1 : 0;
        }
      }
      return c;
    });
    steps.forEach((name, step) -> System.out.printf("  %-56s %8.1f ms%n", name, median(step, runs)));
    System.out.printf("  (PlacementPlanner.plan alone, last run: %.1f ms)%n", placementMs);
  }

  private static List<NodeFacts> nodes(Map<String, ? extends Set<Ip>> hosting) {
    List<NodeFacts> out = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      String name = "n" + i;
      Set<Ip> own = Set.of(Ip.parse("192.0.2." + (i + 1)));
      out.add(new NodeFacts(name, Map.of("zone", i % 2 == 0 ? "a" : "b"), null,
          new HealthObservation(name, Instant.EPOCH.plusSeconds(1), true), own,
          hosting.containsKey(name) ? new HashSet<>(hosting.get(name)) : new HashSet<>(), false, null));
    }
    return out;
  }

  private static double median(Supplier<Object> step, int runs) {
    double[] ms = new double[runs];
    Map<Integer, Object> sink = new HashMap<>();
    for (int i = 0; i < 2; i++) {
      sink.put(i, step.get()); // warm-up
    }
    for (int i = 0; i < runs; i++) {
      long t = System.nanoTime();
      sink.put(i, step.get());
      ms[i] = (System.nanoTime() - t) / 1e6;
    }
    Arrays.sort(ms);
    return ms[runs / 2];
  }
}
