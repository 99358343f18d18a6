package org.ipamoperators.core.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.pool.PoolOverlaps.Decision;
import org.ipamoperators.core.pool.PoolOverlaps.Owner;
import org.ipamoperators.core.pool.PoolOverlaps.Refusal;
import org.junit.jupiter.api.Test;

class PoolOverlapsTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static Owner owner(String kind, String name, int second, String... ranges) {
    return new Owner(kind, name, second < 0 ? null : T0.plusSeconds(second),
        Arrays.stream(ranges).map(IpRange::parse).toList());
  }

  private static List<String> names(List<Owner> owners) {
    return owners.stream().map(Owner::name).toList();
  }

  @Test
  void theYoungerOfTwoNestedPoolsIsRefusedNamingTheOlderAndBothRanges() {
    Owner a = owner("EgressIPAM", "a", 0, "10.0.0.0/27");
    Owner b = owner("EgressIPAM", "b", 5, "10.0.0.0/28");
    Decision d = PoolOverlaps.decide(List.of(b, a));
    assertThat(names(d.accepted())).containsExactly("a");
    Refusal r = d.refusal("EgressIPAM", "b").orElseThrow();
    assertThat(r.message()).isEqualTo("10.0.0.0/28 overlaps EgressIPAM 'a' (10.0.0.0/27)");
    assertThat(r.olderOwners()).containsExactly(a);
    assertThat(d.refusal("EgressIPAM", "a")).isEmpty();
  }

  @Test
  void theOlderKeepsServingWhenTheYoungerIsTheWiderPool() {
    Decision d = PoolOverlaps.decide(List.of(owner("IPGroup", "wide", 9, "10.0.0.0/24"),
        owner("IPGroup", "narrow", 1, "10.0.0.16/28")));
    assertThat(names(d.accepted())).containsExactly("narrow");
    assertThat(d.refusal("IPGroup", "wide").orElseThrow().message())
        .isEqualTo("10.0.0.0/24 overlaps IPGroup 'narrow' (10.0.0.16/28)");
  }

  @Test
  void sameCreationTimeIsDecidedByName() {
    Decision d = PoolOverlaps.decide(List.of(owner("IPGroup", "zeta", 3, "192.0.2.0/24"),
        owner("IPGroup", "alpha", 3, "192.0.2.128/25")));
    assertThat(names(d.accepted())).containsExactly("alpha");
    assertThat(names(d.refused().stream().map(Refusal::owner).toList())).containsExactly("zeta");
  }

  @Test
  void anUnknownCreationTimeCountsAsYoungest() {
    Decision d = PoolOverlaps.decide(List.of(owner("IPGroup", "a", -1, "192.0.2.0/24"),
        owner("IPGroup", "b", 100, "192.0.2.0/24")));
    assertThat(names(d.accepted())).containsExactly("b");
  }

  @Test
  void aRefusedOwnerBlocksNobodySoTheNextServesWhenTheOldestGoes() {
    Owner a = owner("IPGroup", "a", 0, "10.0.0.0/27");
    Owner b = owner("IPGroup", "b", 1, "10.0.0.16/28", "10.0.1.0/28"); // overlaps a
    Owner c = owner("IPGroup", "c", 2, "10.0.1.8/29"); // overlaps only b
    Decision d = PoolOverlaps.decide(List.of(a, b, c));
    assertThat(names(d.accepted())).containsExactly("a", "c");
    assertThat(d.refusal("IPGroup", "b").orElseThrow().message())
        .isEqualTo("10.0.0.16/28 overlaps IPGroup 'a' (10.0.0.0/27)");

    Decision withoutA = PoolOverlaps.decide(List.of(b, c));
    assertThat(names(withoutA.accepted())).containsExactly("b");
    assertThat(withoutA.refusal("IPGroup", "c").orElseThrow().message())
        .isEqualTo("10.0.1.8/29 overlaps IPGroup 'b' (10.0.1.0/28)");
  }

  @Test
  void startEndRangesAndSingleAddressesOverlapToo() {
    Decision d = PoolOverlaps.decide(List.of(owner("IPGroup", "a", 0, "10.0.0.10-10.0.0.20"),
        owner("IPGroup", "b", 1, "10.0.0.20"), owner("IPGroup", "c", 2, "10.0.0.21-10.0.0.30")));
    assertThat(names(d.accepted())).containsExactly("a", "c");
    assertThat(d.refusal("IPGroup", "b").orElseThrow().message())
        .isEqualTo("10.0.0.20 overlaps IPGroup 'a' (10.0.0.10-10.0.0.20)");
  }

  @Test
  void ipv6PoolsOverlapAndNeverMeetIpv4Ones() {
    Decision d = PoolOverlaps.decide(List.of(owner("IPGroup", "v6", 0, "2001:db8::/64"),
        owner("IPGroup", "v6b", 1, "2001:db8::8000/120"), owner("IPGroup", "v4", 2, "0.0.0.0/0")));
    assertThat(names(d.accepted())).containsExactly("v6", "v4");
    assertThat(d.refusal("IPGroup", "v6b").orElseThrow().message())
        .isEqualTo("2001:db8::8000/120 overlaps IPGroup 'v6' (2001:db8::/64)");
  }

  @Test
  void everyOverlapIsListedInAFixedOrderAndTheMessageCountsTheRest() {
    Owner a = owner("EgressIPAM", "a", 0, "10.0.0.0/24");
    Owner b = owner("EgressIPAM", "b", 1, "10.0.1.0/24");
    String[] many = new String[8];
    for (int i = 0; i < 8; i++) {
      many[i] = "10.0." + (i % 2) + "." + (7 - i);
    }
    Refusal r = PoolOverlaps.decide(List.of(b, owner("EgressIPAM", "c", 2, many), a))
        .refusal("EgressIPAM", "c").orElseThrow();
    assertThat(r.overlaps()).extracting(o -> o.range().text()).containsExactly(
        "10.0.0.1", "10.0.0.3", "10.0.0.5", "10.0.0.7", "10.0.1.0", "10.0.1.2", "10.0.1.4", "10.0.1.6");
    assertThat(r.olderOwners()).containsExactly(a, b);
    assertThat(r.message()).isEqualTo("10.0.0.1 overlaps EgressIPAM 'a' (10.0.0.0/24); 10.0.0.3 overlaps EgressIPAM"
        + " 'a' (10.0.0.0/24); 10.0.0.5 overlaps EgressIPAM 'a' (10.0.0.0/24); 10.0.0.7 overlaps EgressIPAM 'a'"
        + " (10.0.0.0/24); 10.0.1.0 overlaps EgressIPAM 'b' (10.0.1.0/24); and 3 more overlap(s)");
  }

  @Test
  void kindsShareOneAddressSpaceAndOneNameMayBeUsedByTwoKinds() {
    Decision d = PoolOverlaps.decide(List.of(owner("EgressIPAM", "x", 0, "10.0.0.0/24"),
        owner("IPGroup", "x", 0, "10.0.0.0/25")));
    assertThat(d.accepted()).extracting(Owner::kind).containsExactly("EgressIPAM");
    assertThat(d.refusal("IPGroup", "x").orElseThrow().message())
        .isEqualTo("10.0.0.0/25 overlaps EgressIPAM 'x' (10.0.0.0/24)");
  }

  @Test
  void twoOwnersOfOneKindAndNameAreAMistakeOfTheCaller() {
    assertThatThrownBy(() -> PoolOverlaps.decide(List.of(owner("IPGroup", "x", 0, "10.0.0.0/24"),
        owner("IPGroup", "x", 1, "10.1.0.0/24")))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("IPGroup 'x'");
  }

  @Test
  void noOwnersNoRangesNothingRefused() {
    assertThat(PoolOverlaps.decide(List.of()).accepted()).isEmpty();
    Decision d = PoolOverlaps.decide(List.of(owner("IPGroup", "empty", 0), owner("IPGroup", "b", 1, "10.0.0.0/8")));
    assertThat(names(d.accepted())).containsExactly("empty", "b");
    assertThat(d.refused()).isEmpty();
  }
}
