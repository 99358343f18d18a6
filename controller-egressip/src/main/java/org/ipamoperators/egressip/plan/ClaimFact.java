package org.ipamoperators.egressip.plan;

import java.time.Instant;
import org.ipamoperators.core.address.Ip;

/**
 * One ledger claim as read, parsed once: its address, pool, the owner's name and description, whether
 * it carries the (older) published label, and when it was made.
 */
public record ClaimFact(Ip address, String pool, String ownerName, String ownerDescription,
    boolean publishedLabel, Instant created) {}
