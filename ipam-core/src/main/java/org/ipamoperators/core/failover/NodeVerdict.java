package org.ipamoperators.core.failover;

import java.time.Instant;

/**
 * The policy's verdict on one node: its condition, since when, and when the verdict may change
 * without any new observation (null if it cannot), which is when a controller should look again.
 */
public record NodeVerdict(String node, NodeCondition condition, Instant since, Instant reviewAt) {
  /**
   * Whether the node's addresses move away.
   *
   * @return true when failed or recovering
   */
  public boolean failed() {
    return condition.failed();
  }

  /**
   * Eligible for new addresses: only a healthy node.
   *
   * @return true when healthy
   */
  public boolean eligible() {
    return condition == NodeCondition.HEALTHY;
  }
}
