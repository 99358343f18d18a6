package org.ipamoperators.controller.common.ledger;

import org.ipamoperators.core.address.Ip;

/**
 * The answer of the block ledger for one address: now ours (entry written), already ours, held by
 * someone else (with who: a block entry or an IPClaim), or failed for this pass (the block stayed
 * contended, or the API server refused; {@code message} says which) and to be tried again later.
 */
public record BlockClaim(Ip ip, Outcome outcome, ClaimOwner holder, String message) {
  public enum Outcome { CLAIMED, ALREADY_OURS, HELD_BY_OTHER, FAILED }

  public boolean ours() {
    return outcome == Outcome.CLAIMED || outcome == Outcome.ALREADY_OURS;
  }

  static BlockClaim of(Ip ip, Outcome outcome, ClaimOwner holder) {
    return new BlockClaim(ip, outcome, holder, null);
  }

  static BlockClaim failed(Ip ip, String message) {
    return new BlockClaim(ip, Outcome.FAILED, null, message);
  }
}
