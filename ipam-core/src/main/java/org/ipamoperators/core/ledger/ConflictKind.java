package org.ipamoperators.core.ledger;

/** Why a claim found in the cluster could not be honoured. */
public enum ConflictKind {
  /** Another owner holds the same address; the earlier claim (then the smaller owner) wins. */
  DUPLICATE_CLAIM,
  /** The address is in none of the pool's ranges, for example after the pool was edited. */
  OUTSIDE_POOL,
  /** The address is reserved, or the network or broadcast address of a CIDR. */
  RESERVED_ADDRESS
}
