package org.ipamoperators.core.plan;

import java.math.BigInteger;
import java.util.List;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.ledger.LedgerConflict;
import org.ipamoperators.core.placement.PlacementPlan;
import org.ipamoperators.core.pool.PoolProblem;

/**
 * What {@link IpamPlanner} decided: each claimant's address per pool (kept or new), what could not
 * be allocated and why, conflicts among the claims found, addresses released, invalid pools, pool
 * usage, and the placement of every address on nodes.
 */
public record PlanResult(List<Allocation> allocations, List<Unallocated> unallocated,
    List<PoolConflict> conflicts, List<Released> released, List<InvalidPool> invalidPools,
    List<PoolUsage> usage, PlacementPlan placement) {

  public record Allocation(String claimant, String pool, Ip address, boolean kept) {}

  public record Unallocated(String claimant, String pool, String reason) {}

  public record PoolConflict(String pool, LedgerConflict conflict) {}

  public record Released(String owner, String pool, Ip address, String reason) {}

  public record InvalidPool(String pool, List<PoolProblem> problems) {}

  public record PoolUsage(String pool, IpFamily family, BigInteger capacity, BigInteger allocated,
      BigInteger free) {}

  public PlanResult {
    allocations = List.copyOf(allocations);
    unallocated = List.copyOf(unallocated);
    conflicts = List.copyOf(conflicts);
    released = List.copyOf(released);
    invalidPools = List.copyOf(invalidPools);
    usage = List.copyOf(usage);
  }

  /** True when every claimant got every address, nothing conflicts and everything is placed. */
  public boolean clean() {
    return unallocated.isEmpty() && conflicts.isEmpty() && invalidPools.isEmpty()
        && placement.unplaceable().isEmpty();
  }
}
