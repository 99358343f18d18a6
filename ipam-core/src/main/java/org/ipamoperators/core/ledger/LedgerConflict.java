package org.ipamoperators.core.ledger;

import org.ipamoperators.core.address.Ip;

/**
 * A claim that lost: which address, whose claim, who holds it instead (for duplicates) and a
 * message fit for an Event or a status condition.
 */
public record LedgerConflict(ConflictKind kind, Ip address, String owner, String heldBy, String message) {}
