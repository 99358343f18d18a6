package org.ipamoperators.core.placement;

import org.ipamoperators.core.address.Ip;

/** An address no node can host now, with the reason in words fit for an Event. */
public record Unplaceable(Ip address, String owner, String group, UnplaceableReason reason,
    String message) {}
