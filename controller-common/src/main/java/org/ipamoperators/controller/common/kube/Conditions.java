package org.ipamoperators.controller.common.kube;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Status conditions the Kubernetes way: one per type, the transition time kept while the status
 * stays the same, so a condition that clears shows when it cleared.
 */
public final class Conditions {
  private Conditions() {}

  public static List<Condition> set(List<Condition> current, String type, boolean status, String reason,
      String message, Long observedGeneration) {
    List<Condition> out = new ArrayList<>();
    Condition previous = null;
    if (current != null) {
      for (Condition c : current) {
        if (type.equals(c.getType())) {
          previous = c;
        } else {
          out.add(c);
        }
      }
    }
    String s = status ? "True" : "False";
    String since = previous != null && s.equals(previous.getStatus()) && previous.getLastTransitionTime() != null
        ? previous.getLastTransitionTime() : Instant.now().toString();
    out.add(new ConditionBuilder().withType(type).withStatus(s).withReason(reason)
        .withMessage(message == null ? "" : message).withObservedGeneration(observedGeneration)
        .withLastTransitionTime(since).build());
    out.sort(java.util.Comparator.comparing(Condition::getType));
    return out;
  }
}
