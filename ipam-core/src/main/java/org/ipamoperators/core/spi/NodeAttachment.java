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
 */
public record NodeAttachment(String node, String interfaceId, List<IpRange> subnets, Ip primaryAddress,
    Set<Ip> secondaryAddresses, int capacity) {
  public static final int UNLIMITED = Integer.MAX_VALUE;

  public NodeAttachment {
    Objects.requireNonNull(node, "node");
    subnets = List.copyOf(subnets);
    secondaryAddresses = Set.copyOf(secondaryAddresses);
  }
}
