package org.ipamoperators.core.failover;

import java.time.Instant;
import java.util.Objects;

/** A node's readiness as seen at a moment: a Ready condition's status and its transition time. */
public record HealthObservation(String node, Instant at, boolean ready) {
  /**
   * Checks the values.
   *
   * @param node the node
   * @param at when it was seen
   * @param ready whether it was ready
   */
  public HealthObservation {
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(at, "at");
  }
}
