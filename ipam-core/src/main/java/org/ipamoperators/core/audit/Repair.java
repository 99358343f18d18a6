package org.ipamoperators.core.audit;

import java.util.Objects;

/**
 * A repair the checker considers provably safe: today only the release of a claim whose owner no
 * longer exists and that nothing publishes. Nothing that a live owner holds or that anyone publishes
 * is ever proposed.
 *
 * @param entry the ledger entry to release
 * @param reason why releasing it cannot take anything from anyone
 */
public record Repair(LedgerEntry entry, String reason) {
  /** Validates the required parts. */
  public Repair {
    Objects.requireNonNull(entry, "entry");
    Objects.requireNonNull(reason, "reason");
  }
}
