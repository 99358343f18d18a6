package org.ipamoperators.core.spi;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;

/**
 * How a node is attached to its network: the interface that carries extra addresses (an ENI id, a
 * NIC ip configuration, a device name), the subnets on it, its primary address, the secondary
 * addresses it holds now, and how many secondary addresses it can hold
 * ({@code NodeAttachment.UNLIMITED} when the platform sets no limit).
 *
 * @param node the node's name
 * @param interfaceId the platform's id of the interface, or null where there is none
 * @param subnets the subnets of that interface; empty where the platform does not say
 * @param primaryAddress the node's primary address, or null when unknown
 * @param secondaryAddresses every extra address on the interface now, this network's or not
 * @param capacity how many more addresses of this network the node can hold
 * @param marked the secondary addresses this network marked on the interface as its own (tags,
 *     configuration names): only these may ever be detached by it; empty where it keeps no mark
 */
public record NodeAttachment(String node, String interfaceId, List<IpRange> subnets, Ip primaryAddress,
    Set<Ip> secondaryAddresses, int capacity, Set<Ip> marked) {
  /** The capacity of a node whose platform sets no limit. */
  public static final int UNLIMITED = Integer.MAX_VALUE;

  /**
   * Copies the collections.
   *
   * @param node the node's name
   * @param interfaceId the interface id, or null
   * @param subnets the interface's subnets
   * @param primaryAddress the primary address, or null
   * @param secondaryAddresses the extra addresses on the interface
   * @param capacity how many more addresses the node can hold
   * @param marked the secondary addresses marked as this network's own
   */
  public NodeAttachment {
    Objects.requireNonNull(node, "node");
    subnets = List.copyOf(subnets);
    secondaryAddresses = Set.copyOf(secondaryAddresses);
    marked = Set.copyOf(marked);
  }

  /**
   * An attachment without marks (a network that keeps none).
   *
   * @param node the node's name
   * @param interfaceId the interface id, or null
   * @param subnets the interface's subnets
   * @param primaryAddress the primary address, or null
   * @param secondaryAddresses the extra addresses on the interface
   * @param capacity how many more addresses the node can hold
   */
  public NodeAttachment(String node, String interfaceId, List<IpRange> subnets, Ip primaryAddress,
      Set<Ip> secondaryAddresses, int capacity) {
    this(node, interfaceId, subnets, primaryAddress, secondaryAddresses, capacity, Set.of());
  }
}
