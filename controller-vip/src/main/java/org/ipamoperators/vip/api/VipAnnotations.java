package org.ipamoperators.vip.api;

/** Annotations, class and finalizer of the VIP controller. */
public final class VipAnnotations {
  private VipAnnotations() {}

  /** The LoadBalancer class this controller serves (besides unclassed Services, by default). */
  public static final String LOAD_BALANCER_CLASS = "ipam.ipamoperators.org/vip";
  /** On a Service: the IPGroup to take its addresses from. */
  public static final String IP_GROUP = "ipam.ipamoperators.org/ip-group";
  /** On a Service: the addresses wanted, comma-separated (one per family). */
  public static final String LOAD_BALANCER_IPS = "ipam.ipamoperators.org/load-balancer-ips";
  /**
   * On a Service: Services with the same key may share an address (MetalLB's rule: no protocol and
   * port in common, the same pods when externalTrafficPolicy is Local). MetalLB's two keys are read
   * too, after ours.
   */
  public static final String SHARING_KEY = "ipam.ipamoperators.org/allow-shared-ip";
  public static final String METALLB_SHARING_KEY = "metallb.io/allow-shared-ip";
  public static final String METALLB_LEGACY_SHARING_KEY = "metallb.universe.tf/allow-shared-ip";
  /** On a shared claim: the Services using the address (JSON list of members). */
  public static final String SHARING_MEMBERS = "ipam.ipamoperators.org/sharing-members";
  /** The condition on a served Service's status: True with its addresses, False with why it has none (or a remark). */
  public static final String CONDITION = "ipam.ipamoperators.org/AddressAssigned";
  /** Finalizer on served Services: their claims are released before they go. */
  public static final String FINALIZER = "ipam.ipamoperators.org/vip";
  /** The old operator's finalizer, dropped when found. */
  public static final String LEGACY_FINALIZER = "ips.paas.org/finalizer";
}
