package org.ipamoperators.core.placement;

/** Why the planner could not host an address. */
public enum UnplaceableReason {
  /** No node of the address's group may host addresses (none exists, or all are failed). */
  NO_ELIGIBLE_NODE_IN_GROUP,
  /** Every eligible node of the group is full. */
  ALL_NODES_AT_CAPACITY,
  /** The same address was asked for twice. */
  DUPLICATE_DEMAND
}
