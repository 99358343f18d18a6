package org.ipamoperators.core.audit;

import java.util.Objects;

/**
 * Where the cluster network routes an egress address: the node a HostSubnet's {@code egressIPs} or an
 * OVN EgressIP's {@code status.items} name. On a cloud the address must be on that node's interface.
 *
 * @param resource the address
 * @param node the node that carries it
 * @param where the object and field that say so, for messages
 */
public record Placement(Resource resource, String node, String where) {
  /** Validates the required parts. */
  public Placement {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(where, "where");
  }
}
