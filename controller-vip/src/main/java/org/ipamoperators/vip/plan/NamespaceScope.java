package org.ipamoperators.vip.plan;

import java.util.Map;
import org.ipamoperators.controller.common.kube.LabelSelectors;
import org.ipamoperators.vip.api.IPGroupSpec;

/**
 * Which namespaces' Services an IPGroup serves: {@code spec.namespaces} (names; empty or absent: all) and
 * {@code spec.namespaceSelector} (labels of the namespace; absent: all). When both are set a Service's namespace
 * must match both. The names are checked first, so the namespace's labels (a GET on the apiserver: the controller
 * keeps no namespace informer) are needed only for a group whose names admit the namespace.
 */
public final class NamespaceScope {
  private NamespaceScope() {}

  /** Whether the group's names admit this namespace. */
  public static boolean namesAdmit(IPGroupSpec spec, String namespace) {
    return spec.namespaces() == null || spec.namespaces().isEmpty() || spec.namespaces().contains(namespace);
  }

  /** Whether the namespace's labels must be read to decide this group for a Service of this namespace. */
  public static boolean needsLabels(IPGroupSpec spec, String namespace) {
    return spec.namespaceSelector() != null && namesAdmit(spec, namespace);
  }

  /** Why the group may not serve a Service of this namespace (null when it may). */
  public static String rejection(IPGroupSpec spec, String namespace, Map<String, String> namespaceLabels) {
    if (!namesAdmit(spec, namespace)) {
      return "its namespaces do not include namespace " + namespace;
    }
    if (!LabelSelectors.matches(spec.namespaceSelector(), namespaceLabels)) {
      return "its namespaceSelector does not match namespace " + namespace;
    }
    return null;
  }
}
