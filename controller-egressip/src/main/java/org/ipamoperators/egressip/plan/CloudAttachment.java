package org.ipamoperators.egressip.plan;

import java.util.Collection;
import java.util.Map;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.network.NetworkType;

/**
 * Who attaches egress addresses to the nodes' cloud interfaces (AWS ENI secondary addresses, Azure
 * NIC ip configurations), decided once per pass from what was read.
 *
 * <p>On OpenShift 4.10+ with OVN-Kubernetes on a public cloud, OVN chooses the node of each
 * EgressIP address itself and OpenShift's cloud-network-config-controller (CNCC) attaches it there.
 * This controller attaching as well, by its own placement, would make two attachers that disagree
 * (on AWS an address is on one ENI at a time). So there the attachment is left to OpenShift.
 *
 * <p>CNCC is recognised by the node annotation it writes ({@link EgressAnnotations#CLOUD_EGRESS_IPCONFIG}),
 * on <em>any</em> node of the cluster, not only the IPAM's selected ones: CNCC runs cluster-wide and
 * attaches every address OVN assigns, whichever node OVN picks. One annotated node proves it runs;
 * a node it has not annotated yet (just joined) or an IPAM that selects none of the annotated nodes
 * must not make this controller a second attacher.
 */
public enum CloudAttachment {
  /** The platform carries an address the cluster network configures: nothing to attach. */
  NOT_NEEDED,
  /** This controller, through the cloud module, on the node its placement chose. */
  THIS_CONTROLLER,
  /** OpenShift (CNCC), on the node OVN-Kubernetes chose. */
  OPENSHIFT,
  /** Nobody: a cloud platform whose module is not configured (reported as a failure). */
  MISSING_MODULE;

  /**
   * @param platformNeedsCloudApi the platform is a cloud (whether or not its module is configured)
   * @param moduleAttaches the configured cloud module attaches addresses through an API
   * @param network the cluster network found
   * @param openShiftAttaches OpenShift's CNCC runs (see {@link #openShiftAttaches})
   */
  public static CloudAttachment decide(boolean platformNeedsCloudApi, boolean moduleAttaches, NetworkType network,
      boolean openShiftAttaches) {
    if (!platformNeedsCloudApi && !moduleAttaches) {
      return NOT_NEEDED;
    }
    if (network == NetworkType.OVN_KUBERNETES && openShiftAttaches) {
      return OPENSHIFT;
    }
    return moduleAttaches ? THIS_CONTROLLER : MISSING_MODULE;
  }

  /** Whether any node (given by its annotations; null for none) carries CNCC's egress-ipconfig annotation. */
  public static boolean openShiftAttaches(Collection<Map<String, String>> nodeAnnotations) {
    return nodeAnnotations.stream().anyMatch(a -> a != null
        && a.get(EgressAnnotations.CLOUD_EGRESS_IPCONFIG) != null
        && !a.get(EgressAnnotations.CLOUD_EGRESS_IPCONFIG).isBlank());
  }

  /** Whether this controller attaches, moves and detaches addresses on the nodes' interfaces. */
  public boolean byThisController() {
    return this == THIS_CONTROLLER;
  }

  /** For the IPAM's status when OpenShift attaches; null otherwise. */
  public String statusNote() {
    return this == OPENSHIFT ? "cloud attachment left to OpenShift: OVN-Kubernetes places each EgressIP address and"
        + " OpenShift's cloud-network-config-controller attaches it (nodes carry "
        + EgressAnnotations.CLOUD_EGRESS_IPCONFIG + "); this controller attaches nothing" : null;
  }
}
