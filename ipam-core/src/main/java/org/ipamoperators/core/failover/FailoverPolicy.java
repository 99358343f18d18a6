package org.ipamoperators.core.failover;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Decides which nodes count as failed now, from their readiness history. A node must be not ready
 * for {@code grace} before it fails (a blip moves nothing), and ready for {@code recovery} before it
 * counts as healthy again (a flapping node stays failed, so its addresses move at most once per
 * window, and a node that comes back does not pull them back). Pure: the same observations and the
 * same {@code now} give the same verdicts.
 */
public record FailoverPolicy(Duration grace, Duration recovery) {

  /**
   * Checks the durations.
   *
   * @param grace how long a node may be not ready before it counts as failed
   * @param recovery how long a failed node must be ready again before it hosts addresses
   */
  public FailoverPolicy {
    Objects.requireNonNull(grace, "grace");
    Objects.requireNonNull(recovery, "recovery");
    if (grace.isNegative() || recovery.isNegative()) {
      throw new IllegalArgumentException("grace and recovery must not be negative");
    }
  }

  /**
   * The verdict on every node observed.
   *
   * @param observations Ready transitions, any order, several per node
   * @param now the time of the verdicts
   * @return each node's verdict, by node name
   */
  public Map<String, NodeVerdict> evaluate(Collection<HealthObservation> observations, Instant now) {
    TreeMap<String, List<HealthObservation>> byNode = new TreeMap<>();
    for (HealthObservation o : observations) {
      byNode.computeIfAbsent(o.node(), k -> new ArrayList<>()).add(o);
    }
    TreeMap<String, NodeVerdict> out = new TreeMap<>();
    byNode.forEach((node, list) -> out.put(node, evaluateNode(node, list, now)));
    return java.util.Collections.unmodifiableMap(out);
  }

  private NodeVerdict evaluateNode(String node, List<HealthObservation> history, Instant now) {
    List<HealthObservation> sorted = new ArrayList<>(history);
    sorted.sort(Comparator.comparing(HealthObservation::at)); // stable: equal times keep input order
    NodeCondition condition = NodeCondition.HEALTHY;
    Instant since = sorted.isEmpty() ? now : sorted.get(0).at();
    for (HealthObservation o : sorted) {
      if (o.at().isAfter(now)) {
        break;
      }
      // deadlines that passed before this observation
      Instant[] s = {since};
      condition = advance(condition, s, o.at());
      since = s[0];
      switch (condition) {
        case HEALTHY -> {
          if (!o.ready()) {
            condition = NodeCondition.SUSPECT;
            since = o.at();
          }
        }
        case SUSPECT -> {
          if (o.ready()) {
            condition = NodeCondition.HEALTHY;
            since = o.at();
          }
        }
        case FAILED -> {
          if (o.ready()) {
            condition = NodeCondition.RECOVERING;
            since = o.at();
          }
        }
        case RECOVERING -> {
          if (!o.ready()) {
            condition = NodeCondition.FAILED;
            since = o.at();
          }
        }
        default -> throw new IllegalStateException("unknown condition " + condition);
      }
    }
    Instant[] s = {since};
    condition = advance(condition, s, now);
    since = s[0];
    Instant review = switch (condition) {
      case SUSPECT -> since.plus(grace);
      case RECOVERING -> since.plus(recovery);
      default -> null;
    };
    return new NodeVerdict(node, condition, since, review);
  }

  /** Applies the timed transitions whose deadline is at or before {@code at}. */
  private NodeCondition advance(NodeCondition condition, Instant[] since, Instant at) {
    if (condition == NodeCondition.SUSPECT && !since[0].plus(grace).isAfter(at)) {
      since[0] = since[0].plus(grace);
      return NodeCondition.FAILED;
    }
    if (condition == NodeCondition.RECOVERING && !since[0].plus(recovery).isAfter(at)) {
      since[0] = since[0].plus(recovery);
      return NodeCondition.HEALTHY;
    }
    return condition;
  }
}
