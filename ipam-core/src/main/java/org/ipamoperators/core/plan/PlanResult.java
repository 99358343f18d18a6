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

  /**
   * A claimant's address in a pool.
   *
   * @param claimant the claimant
   * @param pool the pool
   * @param address the address
   * @param kept true when the claimant held it already, false when newly allocated
   */
  public record Allocation(String claimant, String pool, Ip address, boolean kept) {}

  /**
   * An address a claimant wants and did not get.
   *
   * @param claimant the claimant
   * @param pool the pool it wants an address from
   * @param reason why not (no such pool, invalid pool, exhausted pool)
   */
  public record Unallocated(String claimant, String pool, String reason) {}

  /**
   * A conflict among the claims found in a pool.
   *
   * @param pool the pool, or null for a claim in no pool
   * @param conflict the conflict
   */
  public record PoolConflict(String pool, LedgerConflict conflict) {}

  /**
   * An address given back.
   *
   * @param owner who held it
   * @param pool its pool
   * @param address the address
   * @param reason why it was released
   */
  public record Released(String owner, String pool, Ip address, String reason) {}

  /**
   * A pool that cannot be used, with every problem found in it.
   *
   * @param pool the pool's name
   * @param problems what is wrong, each with the value at fault
   */
  public record InvalidPool(String pool, List<PoolProblem> problems) {}

  /**
   * How much of a pool's family is used.
   *
   * @param pool the pool
   * @param family IPv4 or IPv6
   * @param capacity usable addresses
   * @param allocated addresses allocated
   * @param free addresses free
   */
  public record PoolUsage(String pool, IpFamily family, BigInteger capacity, BigInteger allocated,
      BigInteger free) {}

  /**
   * Copies the lists.
   *
   * @param allocations each claimant's address per pool
   * @param unallocated what could not be allocated
   * @param conflicts conflicts among the claims
   * @param released addresses released
   * @param invalidPools pools that cannot be used
   * @param usage each pool's usage
   * @param placement the placement of every address
   */
  public PlanResult {
    allocations = List.copyOf(allocations);
    unallocated = List.copyOf(unallocated);
    conflicts = List.copyOf(conflicts);
    released = List.copyOf(released);
    invalidPools = List.copyOf(invalidPools);
    usage = List.copyOf(usage);
  }

  /**
   * Whether the plan is without problems.
   *
   * @return true when every claimant got every address, nothing conflicts and everything is placed
   */
  public boolean clean() {
    return unallocated.isEmpty() && conflicts.isEmpty() && invalidPools.isEmpty()
        && placement.unplaceable().isEmpty();
  }
}
