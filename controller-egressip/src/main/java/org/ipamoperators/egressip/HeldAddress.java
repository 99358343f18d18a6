package org.ipamoperators.egressip;

import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;

/**
 * An address an EgressIPAM holds: by an entry of its block (how this controller claims), or by an
 * IPClaim an older version made ({@code claim}; honoured as it is, deleted when released).
 *
 * @param manual written by the user in the namespace's annotation (left there when the IPAM is deleted)
 */
record HeldAddress(Ip ip, String namespace, boolean manual, IPClaim claim) {}
