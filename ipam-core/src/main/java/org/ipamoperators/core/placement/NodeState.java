package org.ipamoperators.core.placement;

import java.util.Objects;
import java.util.Set;
import org.ipamoperators.core.address.Ip;

/**
 * A node as the planner sees it: its group (a zone, or any topology label value; null for none),
 * whether it may host addresses now (ready, selected, not failed), how many it can host, and the
 * addresses it hosts today.
 */
public record NodeState(String name, String group, boolean eligible, int capacity, Set<Ip> assigned) {
  /** Capacity of a node with no known limit. */
  public static final int UNLIMITED = Integer.MAX_VALUE;

  /**
   * Copies the addresses.
   *
   * @param name the node
   * @param group its group (a zone), or null
   * @param eligible whether it may host addresses
   * @param capacity how many it may host ({@link #UNLIMITED} for no limit)
   * @param assigned the addresses it hosts now
   */
  public NodeState {
    Objects.requireNonNull(name, "name");
    if (capacity < 0) {
      throw new IllegalArgumentException("capacity of " + name + " is negative");
    }
    assigned = Set.copyOf(assigned);
  }

  /**
   * Whether the node has no limit.
   *
   * @return true when the capacity is {@link #UNLIMITED}
   */
  public boolean unlimited() {
    return capacity == UNLIMITED;
  }
}
