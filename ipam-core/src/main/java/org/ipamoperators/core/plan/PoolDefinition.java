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
  public PoolDefinition {
    Objects.requireNonNull(name, "name");
    ranges = List.copyOf(ranges);
    reserved = reserved == null ? List.of() : List.copyOf(reserved);
    strategy = strategy == null ? AllocationStrategy.FIRST_FREE : strategy;
    cooldown = cooldown == null ? Duration.ZERO : cooldown;
  }
}
