package org.example.embed;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.failover.FailoverPolicy;
import org.ipamoperators.core.failover.HealthObservation;
import org.ipamoperators.core.failover.NodeVerdict;
import org.ipamoperators.core.ledger.Claim;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.plan.Claimant;
import org.ipamoperators.core.plan.IpamPlanner;
import org.ipamoperators.core.plan.PlanInput;
import org.ipamoperators.core.plan.PlanResult;
import org.ipamoperators.core.plan.PoolDefinition;

/**
 * Plans egress addresses for two zones, then plans again after a node fails: the addresses stay
 * with their owners and move off the failed node. Everything is a pure function of its inputs.
 */
public final class EmbedCore {
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  /** The first plan and the plan after node a1 fails. */
  public record Outcome(PlanResult before, Map<String, NodeVerdict> verdicts, PlanResult after) {}

  private EmbedCore() {}

  static List<PoolDefinition> pools() {
    return List.of(
        new PoolDefinition("egress-a", List.of("192.0.2.0/28"), List.of("192.0.2.1"), AllocationStrategy.STICKY,
            "zone-a", Duration.ofMinutes(5)),
        new PoolDefinition("egress-b", List.of("198.51.100.0/28"), List.of(), AllocationStrategy.FIRST_FREE,
            "zone-b", null));
  }

  static List<Claimant> claimants() {
    return List.of(new Claimant("team-a/web", List.of("egress-a", "egress-b")),
        new Claimant("team-b/batch", List.of("egress-a")));
  }

  static List<NodeState> nodes(Set<String> failed, Map<String, SortedSet<Ip>> hosting) {
    List<NodeState> out = new ArrayList<>();
    for (String[] n : new String[][] {{"a1", "zone-a"}, {"a2", "zone-a"}, {"b1", "zone-b"}}) {
      out.add(new NodeState(n[0], n[1], !failed.contains(n[0]), 4, hosting.getOrDefault(n[0], new java.util.TreeSet<>())));
    }
    return out;
  }

  /** Plans, observes a1 going NotReady for longer than the grace period, plans again. */
  public static Outcome run() {
    PlanResult before = IpamPlanner.plan(new PlanInput(pools(), nodes(Set.of(), Map.of()), claimants(), List.of(),
        null));

    // What the cluster now holds: one claim per allocation, each address on its node.
    List<Claim> claims = before.allocations().stream().map(a -> new Claim(a.address(), a.claimant(), T0)).toList();
    FailoverPolicy policy = new FailoverPolicy(Duration.ofSeconds(30), Duration.ofMinutes(5));
    Instant now = T0.plusSeconds(90);
    Map<String, NodeVerdict> verdicts = policy.evaluate(List.of(
        new HealthObservation("a1", T0.plusSeconds(10), false),
        new HealthObservation("a2", T0, true),
        new HealthObservation("b1", T0, true)), now);
    Set<String> failed = new java.util.TreeSet<>();
    verdicts.forEach((node, v) -> {
      if (v.failed()) {
        failed.add(node);
      }
    });

    PlanResult after = IpamPlanner.plan(new PlanInput(pools(), nodes(failed, before.placement().assignments()),
        claimants(), claims, null));
    return new Outcome(before, verdicts, after);
  }

  public static void main(String[] args) {
    Outcome o = run();
    System.out.println("allocations:");
    o.before().allocations().forEach(a -> System.out.println("  " + a.claimant() + " " + a.pool() + " " + a.address()));
    System.out.println("placement: " + o.before().placement().assignments());
    System.out.println("verdicts: " + o.verdicts().values());
    System.out.println("after a1 failed: " + o.after().placement().assignments());
    o.after().placement().changes().forEach(c -> System.out.println("  " + c));
  }
}
