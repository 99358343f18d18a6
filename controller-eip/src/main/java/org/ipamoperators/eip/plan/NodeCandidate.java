package org.ipamoperators.eip.plan;

import java.util.Map;
import org.ipamoperators.core.failover.NodeCondition;

/**
 * A node as node mode sees it: labels, its condition under the failover policy, whether it is being deleted,
 * whether it can hold an address at all (an InternalIP and an AWS provider id), and whether it lies within the
 * nodes node-mode Eips may select ({@link NodeBound}). A node outside the bound matches selectors as any other
 * (so an Eip can be told why it has none) but may never keep, stay on or take an address.
 */
public record NodeCandidate(String name, Map<String, String> labels, NodeCondition condition, boolean terminating,
    boolean reachable, boolean inBound) {

  /** A node with no bound set. */
  public NodeCandidate(String name, Map<String, String> labels, NodeCondition condition, boolean terminating,
      boolean reachable) {
    this(name, labels, condition, terminating, reachable, true);
  }

  boolean matches(Map<String, String> selector) {
    if (selector == null || selector.isEmpty()) {
      return false; // refused at admission; never "every node"
    }
    return selector.entrySet().stream().allMatch(e -> e.getValue().equals(labels.get(e.getKey())));
  }

  /** May keep an address it holds: not failed (a suspect node keeps it through the grace period). */
  boolean mayKeep() {
    return inBound && !terminating && reachable && !condition.failed();
  }

  /**
   * May stay holding an address nobody else may take, although failed: the node still exists and can hold one
   * (an outage of the control plane makes every node look failed; the address is still serving there).
   */
  boolean mayStay() {
    return inBound && !terminating && reachable;
  }

  /** May take a new address: healthy. */
  boolean mayTake() {
    return inBound && !terminating && reachable && condition == NodeCondition.HEALTHY;
  }
}
