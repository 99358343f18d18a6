package org.ipamoperators.controller.common.ledger;

import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;

/**
 * The answer of {@link BlockLedger#releaseAll}, one address in exactly one of three parts.
 *
 * @param released the owner's entry is gone: removed now, or not there
 * @param heldByOther an entry of another holder (another owner, or another pool) stands; it was left
 *     alone, and the owner never held the address in the blocks
 * @param stillHeld the owner's entry may still stand, with why: the block stayed contended or the
 *     API server refused. The caller must keep treating these addresses as its own (keep its claim,
 *     keep them out of the free set) and release them again later.
 */
public record BlockRelease(Set<Ip> released, Set<Ip> heldByOther, Map<Ip, String> stillHeld) {
  public BlockRelease {
    released = Set.copyOf(released);
    heldByOther = Set.copyOf(heldByOther);
    stillHeld = Map.copyOf(stillHeld);
  }

  /** Whether every entry of the owner is gone. */
  public boolean complete() {
    return stillHeld.isEmpty();
  }
}
