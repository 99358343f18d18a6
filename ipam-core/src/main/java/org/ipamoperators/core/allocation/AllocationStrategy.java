package org.ipamoperators.core.allocation;

/** How an allocator picks among free addresses. */
public enum AllocationStrategy {
  /** The lowest free address: predictable, packs the low end of the pool. */
  FIRST_FREE,
  /** Uniform over the free space (seedable): spreads addresses, hard to guess. */
  RANDOM,
  /**
   * A hash of the owner's key picks the address, moving up to the next free one when taken: the
   * same owner gets the same address on a fresh pool, so a cluster rebuilt from Git keeps its IPs.
   */
  STICKY
}
