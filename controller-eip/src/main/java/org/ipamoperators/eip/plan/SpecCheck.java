package org.ipamoperators.eip.plan;

import java.util.Optional;
import java.util.regex.Pattern;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;

/**
 * What admission cannot refuse in an Eip's spec, in words for its {@code InvalidSpec} condition and Event: a
 * missing spec (allowed by the schema), a v1 {@code podName} that is empty (v1's schema has no length rule, and
 * moving it into {@code selector.pod.podName} would be refused by v2's on every pass), and a pod name no pod can
 * have (an Eip would otherwise wait for it forever, silently).
 */
public final class SpecCheck {
  /** A pod's name is a DNS-1123 subdomain: lower-case labels of at most 63 characters, 253 in all. */
  private static final Pattern POD_NAME = Pattern.compile(
      "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*");

  private SpecCheck() {}

  /** Why the spec cannot be served, or empty when it can. */
  public static Optional<String> problem(EipSpec spec) {
    if (spec == null) {
      return Optional.of("spec is missing: set spec.selector.pod.podName or spec.selector.node.selector");
    }
    if (spec.selector() == null && spec.podName() == null) {
      return Optional.of("set spec.selector (or the v1 spec.podName)");
    }
    if (spec.selector() == null) {
      return podNameProblem(spec.podName(), "spec.podName (v1)");
    }
    EipSelector s = spec.selector();
    if ((s.pod() == null) == (s.node() == null)) {
      return Optional.of("set exactly one of selector.pod and selector.node");
    }
    if (s.pod() != null) {
      return podNameProblem(s.pod().podName(), "spec.selector.pod.podName");
    }
    if (s.node().selector() == null || s.node().selector().isEmpty()) {
      return Optional.of("spec.selector.node.selector is empty: it would match every node; name at least one label");
    }
    return Optional.empty();
  }

  private static Optional<String> podNameProblem(String name, String field) {
    if (name == null || name.isBlank()) {
      return Optional.of(field + " is empty: name the pod that gets the address");
    }
    if (name.length() > 253 || !POD_NAME.matcher(name).matches()) {
      return Optional.of(field + " " + quoted(name) + " cannot be the name of a pod (lower-case letters, digits,"
          + " '-' and '.', at most 253 characters): no pod will ever get this address");
    }
    return Optional.empty();
  }

  /** A user's value in a message: quoted, cut to its first 64 characters with its length when longer. */
  static String quoted(String value) {
    return value.length() <= 64 ? "'" + value + "'" : "'" + value.substring(0, 64) + "...' (" + value.length()
        + " characters)";
  }
}
