package org.ipamoperators.core.audit;

/** What is wrong with one resource. */
public enum FindingKind {
  /**
   * Two or more holders publish the resource, or it is attached to the interfaces of two nodes: the
   * invariant the suite exists to keep is broken.
   */
  DUPLICATE,
  /** Two or more ledger entries claim the resource (a ledger without a creation lock, such as tags). */
  DOUBLE_CLAIM,
  /** Claimed, old enough, and published by nobody. */
  LEAK,
  /** Published (or attached to a cloud interface as this suite's), and claimed by nobody. */
  ORPHAN,
  /**
   * Published by one holder while the ledger names another owner; or, on a cloud, attached to another
   * node's interface than the cluster network routes it through, or to none.
   */
  DRIFT,
  /**
   * A node whose cloud interface could not be read: what it holds is neither confirmed nor reported
   * missing until it can be read again.
   */
  UNKNOWN
}
