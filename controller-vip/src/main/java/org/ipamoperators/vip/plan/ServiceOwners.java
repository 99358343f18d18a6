package org.ipamoperators.vip.plan;

import org.ipamoperators.controller.common.ledger.ClaimOwner;

/**
 * Which claims are a Service's own. Unlike {@link ClaimOwner#sameAs} (name only, which the other
 * controllers keep: their owners carry a finalizer that releases claims before the name can be
 * reused), a Service is identified by its uid too: Services have no finalizer of ours, so a Service
 * deleted and re-created under the same name is a different Service and gets a claim of its own;
 * the old one's claim is released by the old one's delete event or by the sweep, never inherited.
 * A claim recorded without a uid (written by an older version or adopted from the old operator)
 * belongs to whichever Service has the name.
 */
public final class ServiceOwners {
  private ServiceOwners() {}

  public static boolean same(ClaimOwner service, ClaimOwner onClaim) {
    if (service == null || !service.sameAs(onClaim)) {
      return false;
    }
    return service.uid() == null || onClaim.uid() == null || service.uid().equals(onClaim.uid());
  }
}
