package org.ipamoperators.controller.common.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The rule for an address held in both ledgers: same holder, else the record made first, ties to the IPClaim. */
class SplitHoldTest {
  private static final ClaimOwner NS = new ClaimOwner("egressip", "Namespace", null, "payments", "u1");

  @Test
  void theSameOwnerInTheSamePoolIsOneHolderAndAnotherPoolIsNot() {
    ClaimOwner again = new ClaimOwner("egressip", "Namespace", null, "payments", "u2");
    assertThat(SplitHold.sameHolder(NS, "egressipam/a", again, "egressipam/a")).isTrue();
    assertThat(SplitHold.sameHolder(NS, "egressipam/a", again, "egressipam/b")).isFalse();
    assertThat(SplitHold.sameHolder(NS, "egressipam/a", null, "egressipam/a")).isFalse();
    assertThat(SplitHold.sameHolder(null, "egressipam/a", NS, "egressipam/a")).isFalse();
  }

  @Test
  void theOlderRecordWinsAtWholeSeconds() {
    Instant t = Instant.parse("2026-01-02T03:04:05Z");
    assertThat(SplitHold.winner(t.toString(), t.minusSeconds(1).toString())).isEqualTo(SplitHold.Winner.ENTRY);
    assertThat(SplitHold.winner(t.toString(), t.plusSeconds(1).toString())).isEqualTo(SplitHold.Winner.CLAIM);
    // The API server's creationTimestamp has whole seconds; an entry within that second is a tie.
    assertThat(SplitHold.winner(t.toString(), t.plusMillis(999).toString())).isEqualTo(SplitHold.Winner.CLAIM);
    assertThat(SplitHold.winner(t.toString(), t.minusMillis(1).toString())).isEqualTo(SplitHold.Winner.ENTRY);
  }

  @Test
  void anUnreadableTimeGoesToTheClaim() {
    String t = "2026-01-02T03:04:05Z";
    assertThat(SplitHold.winner(t, null)).isEqualTo(SplitHold.Winner.CLAIM);
    assertThat(SplitHold.winner(t, "yesterday")).isEqualTo(SplitHold.Winner.CLAIM);
    assertThat(SplitHold.winner(null, "2020-01-01T00:00:00Z")).isEqualTo(SplitHold.Winner.CLAIM);
  }

  /** Over a grid of times: the entry keeps the address exactly when it was written in an earlier second. */
  @Test
  void theEntryWinsExactlyWhenItsSecondIsEarlier() {
    Instant base = Instant.parse("2026-01-02T03:04:05Z");
    for (long claimMs = 0; claimMs < 3000; claimMs += 250) {
      for (long entryMs = 0; entryMs < 3000; entryMs += 250) {
        String created = base.plusMillis(claimMs).truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
        String since = base.plusMillis(entryMs).toString();
        SplitHold.Winner w = SplitHold.winner(created, since);
        if (entryMs / 1000 < claimMs / 1000) {
          assertThat(w).as("entry %d ms, claim %d ms", entryMs, claimMs).isEqualTo(SplitHold.Winner.ENTRY);
        } else {
          assertThat(w).as("entry %d ms, claim %d ms", entryMs, claimMs).isEqualTo(SplitHold.Winner.CLAIM);
        }
      }
    }
  }
}
