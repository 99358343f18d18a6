package org.ipamoperators.core.placement;

/** Why the planner could not host an address. */
public enum UnplaceableReason {
  NO_ELIGIBLE_NODE_IN_GROUP,
  ALL_NODES_AT_CAPACITY,
  DUPLICATE_DEMAND
}
