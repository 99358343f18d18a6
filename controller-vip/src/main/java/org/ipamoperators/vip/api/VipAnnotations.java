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
  /** Finalizer on served Services: their claims are released before they go. */
  public static final String FINALIZER = "ipam.ipamoperators.org/vip";
  /** The old operator's finalizer, dropped when found. */
  public static final String LEGACY_FINALIZER = "ips.paas.org/finalizer";
}
