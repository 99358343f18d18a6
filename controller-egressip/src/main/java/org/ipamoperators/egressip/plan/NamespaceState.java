package org.ipamoperators.egressip.plan;

/**
 * An opted-in namespace as the planner sees it: its name and uid, and the raw value of its
 * {@code egressips} annotation (null when absent).
 */
public record NamespaceState(String name, String uid, String egressIps) {}
