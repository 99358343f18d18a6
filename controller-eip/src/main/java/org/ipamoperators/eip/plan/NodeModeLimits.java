package org.ipamoperators.eip.plan;

import java.util.Set;
import java.util.TreeSet;

/**
 * Who may use node mode, set by the cluster's operator: the namespaces whose Eips may select nodes (empty: every
 * namespace, as k8s-eip-operator allowed) and the nodes they may select ({@link NodeBound}; empty: any managed node).
 * A node-mode Eip associates a public address with a node's primary interface, which carries every pod's egress
 * through that node: without limits any namespace that may create an Eip decides which nodes are public.
 */
public record NodeModeLimits(Set<String> namespaces, NodeBound nodes) {
  public static final NodeModeLimits NONE = new NodeModeLimits(Set.of(), NodeBound.ANY);

  public NodeModeLimits {
    namespaces = Set.copyOf(namespaces);
    nodes = nodes == null ? NodeBound.ANY : nodes;
  }

  /** Whether an Eip in this namespace may use node mode. */
  public boolean allows(String namespace) {
    return namespaces.isEmpty() || namespaces.contains(namespace);
  }

  /** Why an Eip of this namespace may not use node mode (for its condition and Event). */
  public String refusal(String namespace) {
    return "Eips in namespace " + namespace + " may not use node mode: the operator allows it only in "
        + new TreeSet<>(namespaces) + " (--eip-node-mode-namespaces, env EIP_NODE_MODE_NAMESPACES)";
  }
}
