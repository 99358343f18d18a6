package org.ipamoperators.core.audit;

/** What is wrong with one resource. */
public enum FindingKind {
  /** Two or more holders publish the resource: the invariant the suite exists to keep is broken. */
  DUPLICATE,
  /** Two or more ledger entries claim the resource (a ledger without a creation lock, such as tags). */
  DOUBLE_CLAIM,
  /** Claimed, old enough, and published by nobody. */
  LEAK,
  /** Published, and claimed by nobody. */
  ORPHAN,
  /** Published by one holder while the ledger names another owner. */
  DRIFT
}
