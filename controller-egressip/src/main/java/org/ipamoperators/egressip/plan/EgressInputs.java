package org.ipamoperators.egressip.plan;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.api.EgressIPAMSpec;

/**
 * Everything one decision about an EgressIPAM is made from, as read from the cluster and the
 * platform: the same inputs give the same decision, in the controller and in a test.
 *
 * @param ipam the EgressIPAM's name
 * @param namespaces the opted-in namespaces not being deleted
 * @param claims every claim of the ledger (ours and others')
 * @param platform what the platform's network can do
 * @param inUse per CIDR (as written in the spec), the addresses the platform sees in use, or why it
 *     could not tell; empty where the platform does not see foreign addresses
 */
public record EgressInputs(String ipam, EgressIPAMSpec spec, List<NamespaceState> namespaces,
    List<ClaimFact> claims, List<NodeFacts> nodes, PlatformNetwork platform, Map<String, InUse> inUse) {

  /**
   * @param attaches addresses must be attached to the nodes' interfaces through an API (a cloud)
   * @param reportsCapacity the interface description carries a capacity
   * @param seesForeignAddresses the platform can list the addresses in use in a CIDR
   * @param needsCloudApi the platform is a cloud (whether or not its module is configured)
   */
  public record PlatformNetwork(boolean attaches, boolean reportsCapacity, boolean seesForeignAddresses,
      boolean needsCloudApi) {
    public static final PlatformNetwork BARE_METAL = new PlatformNetwork(false, false, false, false);
  }

  /** The addresses in use in one CIDR, or the problem that hid them. */
  public record InUse(Set<Ip> addresses, String problem) {}
}
