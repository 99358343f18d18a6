package org.ipamoperators.egressip.api;

/** The annotation and label keys users and other operators already rely on. */
public final class EgressAnnotations {
  private EgressAnnotations() {}

  /** On a Namespace: the name of the EgressIPAM it opts in to. */
  public static final String EGRESSIPAM = "egressip-ipam-operator.redhat-cop.io/egressipam";
  /** On a Namespace: its egress IPs, comma separated, one per CIDR in spec order. */
  public static final String EGRESSIPS = "egressip-ipam-operator.redhat-cop.io/egressips";
  /**
   * On a Namespace, written with egressips in the same request: the addresses this operator
   * published there. Tells a user's removal of egressips (new addresses, as the old operator did)
   * from a restart between claim and publication (the claimed addresses are kept).
   */
  public static final String EGRESSIPS_PUBLISHED = "ipam.ipamoperators.org/egressips-published";
  /** On a Node: how many egress IPs it may host (overrides the IPAM's nodeCapacity). */
  public static final String NODE_CAPACITY = "ipam.ipamoperators.org/egress-capacity";
  /** On a Node, for OVN-Kubernetes: the node may host egress IPs. */
  public static final String OVN_EGRESS_ASSIGNABLE = "k8s.ovn.org/egress-assignable";
  /**
   * On a Node, written by OpenShift's cloud-network-config-controller (4.10+, on a public cloud): the
   * node's interface, subnet and egress capacity, a JSON list such as {@code
   * [{"interface":"eni-...","ifaddr":{"ipv4":"10.0.128.0/18"},"capacity":{"ipv4":14,"ipv6":15}}]}. Its
   * presence tells that OpenShift attaches egress addresses to the nodes' interfaces itself.
   */
  public static final String CLOUD_EGRESS_IPCONFIG = "cloud.network.openshift.io/egress-ipconfig";
  /** On objects we write (EgressIP, nodes we labelled): which EgressIPAM manages them. */
  public static final String MANAGED_BY = "ipam.ipamoperators.org/egressipam";
  public static final String FINALIZER = "ipam.ipamoperators.org/egressipam-cleanup";
  /** The anchor's finalizer, removed when found so migrated objects can be deleted. */
  public static final String LEGACY_FINALIZER = "EgressIPAM_controller";
}
