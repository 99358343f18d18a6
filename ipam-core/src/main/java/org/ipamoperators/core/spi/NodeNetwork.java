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
public interface NodeNetwork extends AutoCloseable {

  /**
   * What the platform can do; the same answer on every call.
   *
   * @return the platform's capabilities
   */
  NetworkCapabilities capabilities();

  /**
   * How the node is attached: interface, subnets, primary and secondary addresses, capacity.
   * {@link #apply} acts only on nodes described before.
   *
   * @param node the node as the cluster knows it
   * @return the node's attachment now
   * @throws NodeNetworkException when the platform cannot describe the node; its subject is the
   *     node's name
   */
  NodeAttachment describe(NodeRef node) throws NodeNetworkException;

  /**
   * Every address in the subnet used by anything (nodes, load balancers, other tools) plus those
   * the platform reserves; none of them may be allocated.
   *
   * @param subnet the range to look in
   * @return the addresses in use within {@code subnet}
   * @throws NodeNetworkException when the platform cannot tell; never an empty answer instead
   */
  Set<Ip> addressesInUse(IpRange subnet) throws NodeNetworkException;

  /**
   * Applies the changes, batching per node where the platform allows. Retrying a change that was
   * applied is harmless, and an address this network did not attach is never detached or moved.
   *
   * @param changes what to attach, detach and move
   * @return one result per change, in the order of {@code changes}
   */
  List<AddressChangeResult> apply(List<AddressChange> changes);

  /**
   * This network as the object that owns the addresses configures it through its annotations (such
   * as the old egressip-ipam-operator's per-EgressIPAM load-balancer choice on Azure): the same
   * nodes, clients and locks, other options for the changes made through the returned view. A
   * controller passes the owning object's annotations without knowing which keys matter; a network
   * with no per-object options returns itself, the default.
   *
   * @param annotations the owning object's annotations, never null
   * @return a view of this network (closing it is closing this one), or this network
   */
  default NodeNetwork configuredBy(java.util.Map<String, String> annotations) {
    return this;
  }

  /** Releases what the network holds (API clients, threads); nothing by default. */
  @Override
  default void close() {}
}
