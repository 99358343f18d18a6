package org.ipamoperators.controller.common.ledger;

/**
 * The answer to a claim: the address is now ours (just created, or already recorded for the same
 * owner), or someone else holds it (with who).
 */
public record ClaimResult(Outcome outcome, ClaimOwner holder) {
  public enum Outcome { CLAIMED, ALREADY_OURS, HELD_BY_OTHER }

  public boolean ours() {
    return outcome != Outcome.HELD_BY_OTHER;
  }
}
