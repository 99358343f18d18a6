package org.ipamoperators.core.plan;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.allocation.AllocatorOptions;
import org.ipamoperators.core.ledger.Claim;
import org.ipamoperators.core.ledger.ConflictKind;
import org.ipamoperators.core.ledger.LedgerConflict;
import org.ipamoperators.core.ledger.LedgerRebuild;
import org.ipamoperators.core.ledger.RebuiltLedger;
import org.ipamoperators.core.placement.IpDemand;
import org.ipamoperators.core.placement.PlacementPlan;
import org.ipamoperators.core.placement.PlacementPlanner;
import org.ipamoperators.core.pool.InvalidPoolException;
import org.ipamoperators.core.pool.Pool;
import org.ipamoperators.core.pool.PoolProblem;

/**
 * The whole decision of an IPAM reconcile as one pure function: rebuild each pool's ledger from the
 * claims found, keep what every claimant already holds, allocate what is missing, release what
 * nobody claims any more, then place every address on a node. The {@code ipam plan} command and
 * programs that embed ipam-core use it; each controller plans with its own planner. An invalid pool
 * or a conflicting claim affects only the claimants concerned.
 */
public final class IpamPlanner {
  private IpamPlanner() {}

  /**
   * Plans one reconcile.
   *
   * @param input pools, nodes, claimants, the claims found and placement options
   * @return allocations, releases, conflicts, invalid pools, usage and placement
   */
  public static PlanResult plan(PlanInput input) {
    Pass pass = new Pass();
    pass.readPools(input.pools());
    reportOverlaps(pass.pools, pass.invalid);
    pass.rebuildLedgers(pass.claimsByPool(input.claims()));
    List<Claimant> claimants = new ArrayList<>(input.claimants());
    claimants.sort(Comparator.comparing(Claimant::name));
    pass.releaseUnclaimed(claimants);
    claimants.forEach(pass::allocate);
    List<IpDemand> demands = new ArrayList<>();
    for (PlanResult.Allocation a : pass.allocations) {
      demands.add(new IpDemand(a.address(), pass.definitions.get(a.pool()).group(), a.claimant()));
    }
    PlacementPlan placement = PlacementPlanner.plan(input.nodes(), demands, input.placement());
    return new PlanResult(pass.allocations, pass.unallocated, pass.conflicts, pass.released, pass.invalid,
        pass.usage(), placement);
  }

  /** What one {@link #plan} call has found and decided so far. */
  private static final class Pass {
    final List<PlanResult.InvalidPool> invalid = new ArrayList<>();
    final Map<String, PoolDefinition> definitions = new LinkedHashMap<>();
    final Map<String, Pool> pools = new LinkedHashMap<>();
    final List<PlanResult.PoolConflict> conflicts = new ArrayList<>();
    final Map<String, RebuiltLedger> ledgers = new TreeMap<>();
    final List<PlanResult.Allocation> allocations = new ArrayList<>();
    final List<PlanResult.Unallocated> unallocated = new ArrayList<>();
    final List<PlanResult.Released> released = new ArrayList<>();

    /** The valid pools; a name used twice or an invalid definition is reported. */
    void readPools(List<PoolDefinition> defs) {
      for (PoolDefinition d : defs) {
        if (definitions.putIfAbsent(d.name(), d) != null) {
          invalid.add(new PlanResult.InvalidPool(d.name(), List.of(new PoolProblem(d.name(),
              "pool name '" + d.name() + "' is used twice"))));
          continue;
        }
        try {
          pools.put(d.name(), Pool.of(d.name(), d.ranges(), d.reserved()));
        } catch (InvalidPoolException e) {
          invalid.add(new PlanResult.InvalidPool(d.name(), e.problems()));
        }
      }
    }

    /** Each claim in the pool that contains it; one in no pool at all is a conflict. */
    Map<String, List<Claim>> claimsByPool(List<Claim> claims) {
      Map<String, List<Claim>> claimsByPool = new HashMap<>();
      List<Claim> orderedClaims = new ArrayList<>(claims);
      orderedClaims.sort(Comparator.comparing(Claim::address).thenComparing(Claim::owner));
      for (Claim c : orderedClaims) {
        Optional<Pool> home = pools.values().stream().filter(p -> p.contains(c.address())).findFirst();
        if (home.isPresent()) {
          claimsByPool.computeIfAbsent(home.get().name(), k -> new ArrayList<>()).add(c);
        } else if (definitions.values().stream().noneMatch(d -> !pools.containsKey(d.name()))) {
          conflicts.add(new PlanResult.PoolConflict(null, new LedgerConflict(ConflictKind.OUTSIDE_POOL,
              c.address(), c.owner(), null, c.owner() + " holds " + c.address()
              + ", which is in no pool")));
        }
        // else: it may belong to an invalid pool; leave it untouched rather than call it foreign
      }
      return claimsByPool;
    }

    void rebuildLedgers(Map<String, List<Claim>> claimsByPool) {
      for (Pool p : pools.values()) {
        PoolDefinition d = definitions.get(p.name());
        // Time stands still within one plan: an address released here cools down for the whole plan.
        AllocatorOptions options = AllocatorOptions.of(d.strategy())
            .withCooldown(d.cooldown(), java.time.Clock.fixed(java.time.Instant.EPOCH, java.time.ZoneOffset.UTC));
        RebuiltLedger l = LedgerRebuild.rebuild(p, options, claimsByPool.getOrDefault(p.name(), List.of()));
        ledgers.put(p.name(), l);
        l.conflicts().forEach(c -> conflicts.add(new PlanResult.PoolConflict(p.name(), c)));
      }
    }

    /** Releases what no claimant of the pool claims, and every address of a claimant but its lowest. */
    void releaseUnclaimed(List<Claimant> claimants) {
      Map<String, Set<String>> wants = new HashMap<>();
      for (Claimant c : claimants) {
        wants.put(c.name(), new HashSet<>(c.pools()));
      }
      for (Map.Entry<String, RebuiltLedger> e : ledgers.entrySet()) {
        String pool = e.getKey();
        RebuiltLedger l = e.getValue();
        Set<String> kept = new HashSet<>();
        for (Map.Entry<Ip, String> o : l.owners().entrySet()) {
          Set<String> w = wants.get(o.getValue());
          if (w == null || !w.contains(pool)) {
            l.allocator().release(o.getKey());
            released.add(new PlanResult.Released(o.getValue(), pool, o.getKey(),
                o.getValue() + " no longer claims an address from pool " + pool));
          } else if (!kept.add(o.getValue())) {
            l.allocator().release(o.getKey());
            released.add(new PlanResult.Released(o.getValue(), pool, o.getKey(),
                o.getValue() + " holds more than one address of pool " + pool + "; the lowest is kept"));
          }
        }
      }
    }

    /** Keeps what the claimant holds in each of its pools, or allocates an address there. */
    void allocate(Claimant c) {
      for (String pool : c.pools()) {
        if (!definitions.containsKey(pool)) {
          unallocated.add(new PlanResult.Unallocated(c.name(), pool, "no pool named " + pool));
          continue;
        }
        RebuiltLedger l = ledgers.get(pool);
        if (l == null) {
          unallocated.add(new PlanResult.Unallocated(c.name(), pool, "pool " + pool + " is invalid"));
          continue;
        }
        Optional<Ip> held = l.addressesOf(c.name()).stream()
            .filter(ip -> !l.allocator().isFree(ip)).findFirst();
        if (held.isPresent()) {
          allocations.add(new PlanResult.Allocation(c.name(), pool, held.get(), true));
        } else {
          allocateNew(c, pool, l);
        }
      }
    }

    private void allocateNew(Claimant c, String pool, RebuiltLedger l) {
      Pool p = pools.get(pool);
      Optional<Ip> got = Optional.empty();
      for (IpFamily f : p.families()) {
        got = l.allocator().allocate(f, c.name());
        if (got.isPresent()) {
          break;
        }
      }
      if (got.isPresent()) {
        allocations.add(new PlanResult.Allocation(c.name(), pool, got.get(), false));
      } else {
        unallocated.add(new PlanResult.Unallocated(c.name(), pool, "pool " + pool
            + " is exhausted (" + String.join(" and ", p.families().stream().map(f ->
            l.allocator().capacity(f) + " usable " + f.kubernetesName()).toList())
            + " addresses, all allocated)"));
      }
    }

    List<PlanResult.PoolUsage> usage() {
      List<PlanResult.PoolUsage> usage = new ArrayList<>();
      ledgers.forEach((name, l) -> {
        for (IpFamily f : pools.get(name).families()) {
          usage.add(new PlanResult.PoolUsage(name, f, l.allocator().capacity(f),
              l.allocator().allocatedCount(f), l.allocator().freeCount(f)));
        }
      });
      return usage;
    }
  }

  /** Two pools sharing addresses could hand one address to two owners: both are invalid. */
  private static void reportOverlaps(Map<String, Pool> pools, List<PlanResult.InvalidPool> invalid) {
    List<Pool> list = new ArrayList<>(pools.values());
    Set<String> bad = new HashSet<>();
    Map<String, List<PoolProblem>> problems = new TreeMap<>();
    for (int i = 0; i < list.size(); i++) {
      for (int j = i + 1; j < list.size(); j++) {
        Pool a = list.get(i);
        Pool b = list.get(j);
        a.ranges().stream().forEach(ra -> b.ranges().stream().filter(ra::overlaps).forEach(rb -> {
          String msg = "pool " + a.name() + " (" + ra.text() + ") overlaps pool " + b.name() + " ("
              + rb.text() + ")";
          problems.computeIfAbsent(a.name(), k -> new ArrayList<>()).add(new PoolProblem(ra.text(), msg));
          problems.computeIfAbsent(b.name(), k -> new ArrayList<>()).add(new PoolProblem(rb.text(), msg));
          bad.add(a.name());
          bad.add(b.name());
        }));
      }
    }
    bad.forEach(pools::remove);
    problems.forEach((name, p) -> invalid.add(new PlanResult.InvalidPool(name, p)));
  }
}
