package org.ipamoperators.egressip.plan;

import java.time.Instant;
import org.ipamoperators.core.address.Ip;

/**
 * A claim found in the cluster ledger on an address inside one of the IPAM's CIDRs. {@code
 * namespace} is the owning namespace when the claim is this IPAM's; {@code foreignOwner} describes
 * the holder otherwise (another IPAM, a VIP pool...). {@code published}: the address has been
 * written to the namespace's annotation at least once.
 */
public record ClaimState(Ip address, String namespace, String foreignOwner, boolean published,
    Instant created) {

  public boolean ours() {
    return foreignOwner == null;
  }
}
