package org.ipamoperators.eip.plan;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.ipamoperators.core.failover.FailoverPolicy;
import org.ipamoperators.core.failover.HealthObservation;
import org.ipamoperators.core.failover.NodeCondition;
import org.ipamoperators.core.failover.NodeVerdict;

/**
 * Node readiness under the failover policy, dated by this controller's own sightings: a state (Ready or not) counts
 * from when this controller first saw it, never from the node's {@code lastTransitionTime}. After a control-plane
 * outage every node shows {@code Ready=Unknown} with a transition time long past; dated from that, the grace would
 * already be over at the first look. A failure is remembered, so a node flapping back waits out the recovery window.
 * Not thread-safe: the caller serialises {@link #evaluate}. Deterministic for the same calls and times.
 */
public final class NodeHealth {
  private record Sighting(boolean ready, Instant since) {}

  private final FailoverPolicy policy;
  private final Map<String, Sighting> seen = new HashMap<>();
  private final Map<String, Instant> failedAt = new HashMap<>();

  public NodeHealth(Duration grace, Duration recovery) {
    this.policy = new FailoverPolicy(grace, recovery);
  }

  /**
   * The verdict on every node given, seen now; nodes not given are forgotten.
   *
   * @param ready node name to whether its Ready condition is True
   */
  public Map<String, NodeVerdict> evaluate(Map<String, Boolean> ready, Instant now) {
    seen.keySet().retainAll(ready.keySet());
    failedAt.keySet().retainAll(ready.keySet());
    List<HealthObservation> health = new ArrayList<>();
    ready.forEach((node, isReady) -> {
      Sighting s = seen.get(node);
      if (s == null || s.ready() != isReady) {
        s = new Sighting(isReady, now);
        seen.put(node, s);
      }
      Instant failed = failedAt.get(node);
      if (failed != null) {
        health.add(new HealthObservation(node, failed.minus(policy.grace()), false));
      }
      health.add(new HealthObservation(node, s.since(), s.ready()));
    });
    Map<String, NodeVerdict> verdicts = policy.evaluate(health, now);
    verdicts.forEach((node, v) -> {
      if (v.condition() == NodeCondition.FAILED) {
        failedAt.putIfAbsent(node, v.since());
      } else if (v.condition() == NodeCondition.HEALTHY) {
        failedAt.remove(node);
      }
    });
    return verdicts;
  }
}
