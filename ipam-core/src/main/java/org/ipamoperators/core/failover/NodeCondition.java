package org.ipamoperators.core.failover;

/** Where a node stands in the failover policy. */
public enum NodeCondition {
  /** Ready, or never seen otherwise: may host addresses. */
  HEALTHY,
  /** Not ready for less than the grace period: keeps its addresses, gets no new ones. */
  SUSPECT,
  /** Not ready past the grace period: its addresses move. */
  FAILED,
  /** Ready again, but not for the whole recovery window yet: still counts as failed. */
  RECOVERING;

  /**
   * Whether the node must not host addresses now.
   *
   * @return true when failed or recovering
   */
  public boolean failed() {
    return this == FAILED || this == RECOVERING;
  }
}
