package org.ipamoperators.core.placement;

import org.ipamoperators.core.address.Ip;

/**
 * One step of a plan: PLACE an address that no node hosts, MOVE it between nodes, or REMOVE it from
 * a node (no longer wanted there, or hosted twice). {@code reason} says why, for Events and logs.
 */
public record Change(Kind kind, Ip address, String from, String to, String reason) {
  /** What a change does to its address. */
  public enum Kind {
    /** Put on {@code to}. */
    PLACE,
    /** From {@code from} to {@code to}. */
    MOVE,
    /** Taken off {@code from}. */
    REMOVE
  }
}
