package org.ipamoperators.core.allocation;

/** What became of a request for one specific address. */
public enum ClaimOutcome {
  CLAIMED,
  ALREADY_ALLOCATED,
  OUTSIDE_POOL,
  RESERVED
}
