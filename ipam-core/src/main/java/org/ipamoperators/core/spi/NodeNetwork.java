package org.ipamoperators.core.spi;

import java.util.List;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;

/**
 * The platform side of egress and VIP addresses, implemented by the cloud modules (EC2, Azure,
 * bare metal). Controllers plan with ipam-core and call this only to look and to apply, so every
 * decision stays testable without a cloud.
 *
 * <p>Discovery failures are exceptions, never an empty answer: "nothing in use" must not be
 * mistaken for "could not look". {@link #apply} never throws for one address: it returns one
 * result per change, so one bad node does not stop the others.
 */
public interface NodeNetwork {

  NetworkCapabilities capabilities();

  /** How the node is attached: interface, subnets, primary and secondary addresses, capacity. */
  NodeAttachment describe(NodeRef node) throws NodeNetworkException;

  /**
   * Every address in the subnet used by anything (nodes, load balancers, other tools) plus those
   * the platform reserves; none of them may be allocated.
   */
  Set<Ip> addressesInUse(IpRange subnet) throws NodeNetworkException;

  /** Applies the changes, batching per node where the platform allows; one result per change. */
  List<AddressChangeResult> apply(List<AddressChange> changes);
}
