package org.ipamoperators.core.failover;

import java.time.Instant;
import java.util.Objects;

/** A node's readiness as seen at a moment: a Ready condition's status and its transition time. */
public record HealthObservation(String node, Instant at, boolean ready) {
  public HealthObservation {
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(at, "at");
  }
}
