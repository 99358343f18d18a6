package org.ipamoperators.egressip.network;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;

/**
 * What one reconcile wants the cluster network to show for one EgressIPAM: each served namespace's
 * addresses, each node's hosted addresses (explicit mode) or CIDR (CIDR mode), the namespaces whose
 * egress must be cleared, and the nodes the IPAM may use.
 *
 * @param ipam the EgressIPAM's name, stamped on what we create
 * @param cidrs the IPAM's CIDRs: addresses in them are ours to set or clear, others are left alone
 * @param namespaces served namespace to its addresses in spec order
 * @param cleared namespaces that lost their addresses (opted out, or the IPAM is going away)
 * @param hosting node to the addresses it should host (explicit mode)
 * @param cidrMode node to the CIDR SDN may pick from (CIDR mode: one CIDR on bare metal)
 * @param assignableNodes nodes that may host egress IPs (OVN's egress-assignable label)
 */
public record NetworkWrite(String ipam, List<IpRange> cidrs, Map<String, List<Ip>> namespaces,
    Set<String> cleared, Map<String, Set<Ip>> hosting, Map<String, IpRange> cidrMode,
    Set<String> assignableNodes) {

  public boolean ours(String address) {
    try {
      Ip ip = Ip.parse(address);
      return cidrs.stream().anyMatch(c -> c.contains(ip));
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
