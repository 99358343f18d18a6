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
 * @param foreign addresses inside {@code cidrs} that the ledger says another pool or controller holds
 *     (an overlapping IPAM's): never ours to set or clear
 */
public record NetworkWrite(String ipam, List<IpRange> cidrs, Map<String, List<Ip>> namespaces,
    Set<String> cleared, Map<String, Set<Ip>> hosting, Map<String, IpRange> cidrMode,
    Set<String> assignableNodes, Set<Ip> foreign) {

  public NetworkWrite(String ipam, List<IpRange> cidrs, Map<String, List<Ip>> namespaces, Set<String> cleared,
      Map<String, Set<Ip>> hosting, Map<String, IpRange> cidrMode, Set<String> assignableNodes) {
    this(ipam, cidrs, namespaces, cleared, hosting, cidrMode, assignableNodes, Set.of());
  }

  /** The same write, with the addresses of our CIDRs that others hold. */
  public NetworkWrite withForeign(Set<Ip> held) {
    return new NetworkWrite(ipam, cidrs, namespaces, cleared, hosting, cidrMode, assignableNodes, Set.copyOf(held));
  }

  /**
   * Whether an entry of a network object is ours to set or clear: an address inside our CIDRs that no
   * other pool holds, or (an {@code egressCIDRs} entry) exactly one of our CIDRs. A CIDR inside ours
   * is another IPAM's, not ours.
   */
  public boolean ours(String entry) {
    try {
      if (entry.contains("/")) {
        IpRange r = IpRange.parse(entry);
        return cidrs.contains(r);
      }
      Ip ip = Ip.parse(entry);
      return !foreign.contains(ip) && cidrs.stream().anyMatch(c -> c.contains(ip));
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
