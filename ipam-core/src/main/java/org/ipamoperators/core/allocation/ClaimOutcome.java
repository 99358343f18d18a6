package org.ipamoperators.core.allocation;

/** What became of a request for one specific address. */
public enum ClaimOutcome {
  /** The address is now the claimant's. */
  CLAIMED,
  /** Someone holds it already. */
  ALREADY_ALLOCATED,
  /** It is not in the pool. */
  OUTSIDE_POOL,
  /** It is in the pool but reserved. */
  RESERVED
}
