package org.ipamoperators.eip.plan;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.controller.common.kube.LabelSelectors;

/**
 * The nodes node-mode Eips may select at all, as a label selector in kubectl's {@code -l} syntax
 * ({@code key=value}, {@code key!=value}, {@code key}, {@code !key}, {@code key in (a,b)}, {@code key notin (a,b)},
 * comma-separated, all must hold). Empty: any node. A node outside it is never a candidate, whatever an Eip's own
 * selector says: the Eip's author chooses among the nodes the cluster's operator set aside.
 *
 * @param selector the parsed selector (no terms: any node)
 * @param text the selector as given, for messages
 */
public record NodeBound(LabelSelector selector, String text) {
  public static final NodeBound ANY = new NodeBound(new LabelSelector(List.of(), Map.of()), "");

  private static final String KEY = "(?:[A-Za-z0-9.\\-]+/)?[A-Za-z0-9]([A-Za-z0-9_.\\-]*[A-Za-z0-9])?";
  private static final String VALUE = "(?:[A-Za-z0-9]([A-Za-z0-9_.\\-]*[A-Za-z0-9])?)?";
  private static final Pattern EQUALS = Pattern.compile("(" + KEY + ")\\s*(==|=|!=)\\s*(" + VALUE + ")");
  private static final Pattern SET = Pattern.compile("(" + KEY + ")\\s+(in|notin)\\s*\\(([^()]*)\\)");
  private static final Pattern EXISTS = Pattern.compile("(!?)\\s*(" + KEY + ")");

  public boolean any() {
    return text.isEmpty();
  }

  /** Whether a node with these labels may be selected by a node-mode Eip. */
  public boolean admits(Map<String, String> labels) {
    return LabelSelectors.matches(selector, labels);
  }

  /**
   * Parses a selector; blank is {@link #ANY}. A term that is not one of the forms above throws with the term named
   * (a setting: the start fails rather than bounding nodes differently from what was meant).
   */
  public static NodeBound parse(String text) {
    if (text == null || text.isBlank()) {
      return ANY;
    }
    Map<String, String> labels = new TreeMap<>();
    List<LabelSelectorRequirement> expressions = new ArrayList<>();
    for (String term : terms(text)) {
      Matcher m;
      if ((m = SET.matcher(term)).matches()) {
        List<String> values = new ArrayList<>();
        for (String v : m.group(4).split(",")) {
          if (!v.isBlank() && !v.trim().matches(VALUE)) {
            throw new IllegalArgumentException("'" + v.trim() + "' in '" + term + "' is not a label value");
          }
          if (!v.isBlank()) {
            values.add(v.trim());
          }
        }
        expressions.add(new LabelSelectorRequirement(m.group(1), m.group(3).equals("in") ? "In" : "NotIn", values));
      } else if ((m = EQUALS.matcher(term)).matches()) {
        if (m.group(3).equals("!=")) {
          expressions.add(new LabelSelectorRequirement(m.group(1), "NotIn", List.of(m.group(4))));
        } else if (labels.putIfAbsent(m.group(1), m.group(4)) != null && !labels.get(m.group(1)).equals(m.group(4))) {
          throw new IllegalArgumentException("'" + text + "' asks " + m.group(1) + " to have two values");
        }
      } else if ((m = EXISTS.matcher(term)).matches()) {
        expressions.add(new LabelSelectorRequirement(m.group(2), m.group(1).isEmpty() ? "Exists" : "DoesNotExist",
            List.of()));
      } else {
        throw new IllegalArgumentException("'" + term + "' is not a label selector term such as role=egress,"
            + " role!=web, role, !role, role in (a,b) or role notin (a,b)");
      }
    }
    return new NodeBound(new LabelSelector(expressions, labels), text.trim());
  }

  /** The comma-separated terms, commas inside parentheses kept. */
  private static List<String> terms(String text) {
    List<String> terms = new ArrayList<>();
    int depth = 0;
    StringBuilder term = new StringBuilder();
    for (char c : text.toCharArray()) {
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      }
      if (c == ',' && depth == 0) {
        terms.add(term.toString().trim());
        term.setLength(0);
      } else {
        term.append(c);
      }
    }
    terms.add(term.toString().trim());
    if (depth != 0 || terms.stream().anyMatch(String::isEmpty)) {
      throw new IllegalArgumentException("'" + text + "' is not a label selector (an empty term or unbalanced"
          + " parentheses)");
    }
    return terms;
  }
}
