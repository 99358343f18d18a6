package org.ipamoperators.core.audit;

import java.time.Instant;
import java.util.Objects;

/**
 * One claim found in a ledger.
 *
 * @param resource what is claimed
 * @param owner who holds it, in the same words the publications use for their holder
 * @param reference where the claim lives (for example "IPClaim 192-0-2-7"), for messages and repairs
 * @param claimedAt when it was claimed (may be null when unknown: then it is never old enough to be
 *     called a leak)
 * @param ownerExists whether the owning object still exists in the cluster; a claim whose owner is
 *     gone and that nobody publishes is the only claim the checker proposes to release
 */
public record LedgerEntry(Resource resource, String owner, String reference, Instant claimedAt,
    boolean ownerExists) {
  /** Validates the required parts. */
  public LedgerEntry {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(reference, "reference");
  }
}
