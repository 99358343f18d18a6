package org.ipamoperators.controller.common.ledger;

/**
 * The answer to a claim: the address is now ours (just created, or already recorded for the same
 * owner), or someone else holds it (with who). {@code claim} is the object as the API server
 * answered it (the created claim, or the existing one read after a 409), for callers that keep an
 * index of claims ({@link ClaimIndex}); null only in results made by hand.
 */
public record ClaimResult(Outcome outcome, ClaimOwner holder, IPClaim claim) {
  public enum Outcome { CLAIMED, ALREADY_OURS, HELD_BY_OTHER }

  public ClaimResult(Outcome outcome, ClaimOwner holder) {
    this(outcome, holder, null);
  }

  public boolean ours() {
    return outcome != Outcome.HELD_BY_OTHER;
  }
}
