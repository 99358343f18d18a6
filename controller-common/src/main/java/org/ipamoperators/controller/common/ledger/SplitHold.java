package org.ipamoperators.controller.common.ledger;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

/**
 * The rule for an address held in both ledgers: an {@link IPClaim} and an {@link IPBlock} entry.
 * That state is only left behind by a process killed between its write and its check of the other
 * ledger; whoever finds it applies this rule, and every reader reaches the same answer from the same
 * two records, so two replicas never both call the address theirs.
 *
 * <p><b>Same holder.</b> The two records name the same holder when their owners are the same
 * ({@link ClaimOwner#sameAs}) and their pools are equal: then the address is that holder's.
 *
 * <p><b>Different holders: the one made first keeps it.</b> A claimer that finished its check found
 * no other record, so its record is the older one; it may already have told its caller, who may have
 * published the address. The half-written record is the newer one. The ledgers cannot see
 * publication, so they compare age: the IPClaim's {@code creationTimestamp} (set by the API server,
 * whole seconds) against the entry's {@code since} (the writer's clock, taken before the write), at
 * whole seconds. The entry wins only when it is strictly older; a tie, or an entry without a
 * readable {@code since}, goes to the IPClaim, the record every controller of the suite honours.
 * The loser's side withdraws its own record (a conditioned write) and answers that the address is
 * held by the other; the winner's side keeps answering "ours".
 */
public final class SplitHold {
  /** Which record keeps the address. */
  public enum Winner { CLAIM, ENTRY }

  private SplitHold() {}

  /** Whether two records name the same holder: same owner and same pool. */
  public static boolean sameHolder(ClaimOwner a, String poolA, ClaimOwner b, String poolB) {
    return a != null && b != null && a.sameAs(b) && Objects.equals(poolA, poolB);
  }

  /** The record that keeps an address held by an IPClaim created at {@code claimCreated} and an entry since {@code entrySince}. */
  public static Winner winner(String claimCreated, String entrySince) {
    Instant claim = parse(claimCreated);
    Instant entry = parse(entrySince);
    if (claim == null || entry == null) {
      return Winner.CLAIM;
    }
    return entry.truncatedTo(ChronoUnit.SECONDS).isBefore(claim.truncatedTo(ChronoUnit.SECONDS))
        ? Winner.ENTRY : Winner.CLAIM;
  }

  /** {@link #winner(String, String)} of a claim object and an entry. */
  public static Winner winner(IPClaim claim, IPBlockEntry entry) {
    String created = claim.getMetadata() == null ? null : claim.getMetadata().getCreationTimestamp();
    return winner(created, entry.since());
  }

  private static Instant parse(String time) {
    if (time == null) {
      return null;
    }
    try {
      return Instant.parse(time);
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
