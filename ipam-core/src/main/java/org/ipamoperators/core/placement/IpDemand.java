package org.ipamoperators.core.placement;

import java.util.Objects;
import org.ipamoperators.core.address.Ip;

/**
 * An address that must be hosted by a node of a group (null: any node), for an owner such as a
 * namespace. An owner's several addresses prefer distinct nodes.
 */
public record IpDemand(Ip address, String group, String owner) {
  /**
   * Checks the values.
   *
   * @param address the address to host
   * @param group the node group that may host it, or null for any node
   * @param owner who holds it (its addresses are spread over nodes)
   */
  public IpDemand {
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(owner, "owner");
  }
}
