package org.ipamoperators.core.plan;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.ipamoperators.core.allocation.AllocationStrategy;

/**
 * A pool as a user writes it: ranges and reserved addresses as text, the strategy, and the node
 * group (a zone, for example) whose nodes host its addresses; null group means any node.
 */
public record PoolDefinition(String name, List<String> ranges, List<String> reserved,
    AllocationStrategy strategy, String group, Duration cooldown) {
  /**
   * Fills the defaults: no reserved addresses, FIRST_FREE, no cooldown.
   *
   * @param name the pool's name
   * @param ranges CIDRs, start-end ranges or addresses
   * @param reserved addresses never handed out, or null
   * @param strategy how addresses are chosen, or null
   * @param group the node group hosting its addresses, or null for any
   * @param cooldown how long a released address rests, or null
   */
  public PoolDefinition {
    Objects.requireNonNull(name, "name");
    ranges = List.copyOf(ranges);
    reserved = reserved == null ? List.of() : List.copyOf(reserved);
    strategy = strategy == null ? AllocationStrategy.FIRST_FREE : strategy;
    cooldown = cooldown == null ? Duration.ZERO : cooldown;
  }
}
