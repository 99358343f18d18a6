package org.ipamoperators.controller.common.ids;

import java.util.OptionalInt;
import org.ipamoperators.controller.common.ledger.ClaimOwner;

/**
 * The answer to a claim for a number: claimed now, already held by the same owner for the same purpose, or (for
 * one given number) held by someone else, or (for the first free number) none free.
 *
 * @param outcome what happened
 * @param id the number, unless {@link Outcome#EXHAUSTED}
 * @param holder who holds it (the owner, or the other holder)
 */
public record IdClaimResult(Outcome outcome, OptionalInt id, ClaimOwner holder) {
  public enum Outcome { CLAIMED, ALREADY_OURS, HELD_BY_OTHER, EXHAUSTED }

  public boolean ours() {
    return outcome == Outcome.CLAIMED || outcome == Outcome.ALREADY_OURS;
  }
}
