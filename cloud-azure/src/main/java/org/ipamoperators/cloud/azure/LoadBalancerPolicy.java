package org.ipamoperators.cloud.azure;

import java.util.Locale;

/**
 * Which load-balancer backend pools an egress ipConfiguration joins, as the old operator's
 * EgressIPAM annotation {@code egressip-ipam-operator.redhat-cop.io/azure-egress-load-balancer}
 * chose: {@code none} joins none; anything else ({@code same-as-primary-ip}, or no annotation)
 * joins the pools of the NIC's primary ipConfiguration, except pools an outbound rule uses (Azure
 * refuses secondary ipConfigurations in those).
 */
public enum LoadBalancerPolicy {
  SAME_AS_PRIMARY, NONE;

  /** The old operator's annotation on an EgressIPAM. */
  public static final String ANNOTATION = "egressip-ipam-operator.redhat-cop.io/azure-egress-load-balancer";

  public static LoadBalancerPolicy fromAnnotation(String value) {
    return value != null && "none".equals(value.trim().toLowerCase(Locale.ROOT)) ? NONE : SAME_AS_PRIMARY;
  }
}
