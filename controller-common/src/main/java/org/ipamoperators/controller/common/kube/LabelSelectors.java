package org.ipamoperators.controller.common.kube;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.List;
import java.util.Map;

/** Evaluates a LabelSelector against labels, with the API server's semantics. */
public final class LabelSelectors {
  private LabelSelectors() {}

  /** A null or empty selector selects everything, as in the Kubernetes API. */
  public static boolean matches(LabelSelector selector, Map<String, String> labels) {
    Map<String, String> l = labels == null ? Map.of() : labels;
    if (selector == null) {
      return true;
    }
    if (selector.getMatchLabels() != null) {
      for (Map.Entry<String, String> e : selector.getMatchLabels().entrySet()) {
        if (!e.getValue().equals(l.get(e.getKey()))) {
          return false;
        }
      }
    }
    if (selector.getMatchExpressions() != null) {
      for (LabelSelectorRequirement r : selector.getMatchExpressions()) {
        List<String> values = r.getValues() == null ? List.of() : r.getValues();
        boolean has = l.containsKey(r.getKey());
        boolean ok = switch (r.getOperator()) {
          case "In" -> has && values.contains(l.get(r.getKey()));
          case "NotIn" -> !has || !values.contains(l.get(r.getKey()));
          case "Exists" -> has;
          case "DoesNotExist" -> !has;
          default -> false; // an unknown operator selects nothing, rather than everything
        };
        if (!ok) {
          return false;
        }
      }
    }
    return true;
  }
}
