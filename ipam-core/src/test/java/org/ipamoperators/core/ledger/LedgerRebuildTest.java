package org.ipamoperators.core.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.allocation.AllocatorOptions;
import org.ipamoperators.core.pool.Pool;
import org.junit.jupiter.api.Test;

class LedgerRebuildTest {
  private static final Pool POOL = Pool.of("egress", List.of("192.0.2.0/28"), List.of("192.0.2.5"));
  private static final AllocatorOptions FIRST = AllocatorOptions.of(AllocationStrategy.FIRST_FREE);

  @Test
  void restoresEveryHonouredClaimAndAllocatesAroundThem() {
    RebuiltLedger l = LedgerRebuild.rebuild(POOL, FIRST, List.of(
        Claim.of(Ip.parse("192.0.2.1"), "ns-a"), Claim.of(Ip.parse("192.0.2.2"), "ns-b"),
        Claim.of(Ip.parse("192.0.2.2"), "ns-b"))); // the same claim twice is not a conflict
    assertThat(l.conflicts()).isEmpty();
    assertThat(l.owners()).hasSize(2);
    assertThat(l.addressesOf("ns-b")).containsExactly(Ip.parse("192.0.2.2"));
    assertThat(l.allocator().allocate(IpFamily.IPV4)).contains(Ip.parse("192.0.2.3"));
    assertThat(l.allocator().allocatedCount(IpFamily.IPV4)).isEqualTo(BigInteger.valueOf(3));
  }

  @Test
  void aDoubleClaimHasADeterministicWinnerWhateverTheOrder() {
    Ip ip = Ip.parse("192.0.2.3");
    List<Claim> claims = new ArrayList<>(List.of(
        new Claim(ip, "ns-late", Instant.parse("2026-02-01T00:00:00Z")),
        new Claim(ip, "ns-early", Instant.parse("2026-01-01T00:00:00Z")),
        new Claim(ip, "ns-unknown-time", null)));
    for (int i = 0; i < 6; i++) {
      Collections.shuffle(claims, new java.util.Random(i));
      RebuiltLedger l = LedgerRebuild.rebuild(POOL, FIRST, claims);
      assertThat(l.owners()).containsEntry(ip, "ns-early");
      assertThat(l.conflicts()).extracting(LedgerConflict::owner)
          .containsExactly("ns-late", "ns-unknown-time");
      assertThat(l.conflicts()).allSatisfy(c -> {
        assertThat(c.kind()).isEqualTo(ConflictKind.DUPLICATE_CLAIM);
        assertThat(c.heldBy()).isEqualTo("ns-early");
        assertThat(c.message()).contains("ns-early keeps it");
      });
    }
    // without times, the smaller owner name wins
    RebuiltLedger l = LedgerRebuild.rebuild(POOL, FIRST, List.of(Claim.of(ip, "zeta"), Claim.of(ip, "alpha")));
    assertThat(l.owners()).containsEntry(ip, "alpha");
  }

  @Test
  void claimsOutsideThePoolOrOnReservedAddressesAreReportedNotThrown() {
    RebuiltLedger l = LedgerRebuild.rebuild(POOL, FIRST, List.of(
        Claim.of(Ip.parse("198.51.100.1"), "ns-a"), Claim.of(Ip.parse("192.0.2.5"), "ns-b"),
        Claim.of(Ip.parse("192.0.2.15"), "ns-c"), Claim.of(Ip.parse("2001:db8::1"), "ns-d")));
    assertThat(l.owners()).isEmpty();
    assertThat(l.conflicts()).extracting(LedgerConflict::kind).containsExactly(
        ConflictKind.RESERVED_ADDRESS, ConflictKind.RESERVED_ADDRESS, ConflictKind.OUTSIDE_POOL,
        ConflictKind.OUTSIDE_POOL);
    assertThat(l.conflicts().get(0).message()).contains("reserved");
    assertThat(l.conflicts().get(1).message()).contains("broadcast address of 192.0.2.0/28");
  }
}
