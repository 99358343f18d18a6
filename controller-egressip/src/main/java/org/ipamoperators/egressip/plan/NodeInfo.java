package org.ipamoperators.egressip.plan;

import java.util.Set;
import org.ipamoperators.core.address.Ip;

/**
 * A node as the egress planner sees it: the value of the IPAM's topology label (null when absent),
 * whether it matches the node selector, whether it may host addresses now (ready past the failover
 * policy), its capacity, its own addresses (never handed out) and the egress IPs it hosts today.
 */
public record NodeInfo(String name, String topologyValue, boolean selected, boolean eligible,
    int capacity, Set<Ip> primaryAddresses, Set<Ip> hosting) {}
