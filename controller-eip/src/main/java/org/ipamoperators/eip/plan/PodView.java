package org.ipamoperators.eip.plan;

/**
 * What the planner needs of a pod: whether it opted in (label {@code manage}, not {@code false}), whether it is
 * terminating, its node and its IP (either may still be missing).
 */
public record PodView(String name, boolean managed, boolean terminating, String nodeName, String podIp) {}
