package org.ipamoperators.core.placement;

import org.ipamoperators.core.address.Ip;

/**
 * One step of a plan: PLACE an address that no node hosts, MOVE it between nodes, or REMOVE it from
 * a node (no longer wanted there, or hosted twice). {@code reason} says why, for Events and logs.
 */
public record Change(Kind kind, Ip address, String from, String to, String reason) {
  public enum Kind { PLACE, MOVE, REMOVE }
}
