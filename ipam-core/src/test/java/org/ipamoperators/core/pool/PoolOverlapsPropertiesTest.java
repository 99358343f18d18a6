package org.ipamoperators.core.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.pool.PoolOverlaps.Decision;
import org.ipamoperators.core.pool.PoolOverlaps.Overlap;
import org.ipamoperators.core.pool.PoolOverlaps.Owner;
import org.ipamoperators.core.pool.PoolOverlaps.Refusal;
import org.junit.jupiter.api.Test;

/** The overlap rule over generated owners (QuickTheories): IPv4 only, IPv6 only, and both mixed. */
class PoolOverlapsPropertiesTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final String[] KINDS = {"IPGroup", "EgressIPAM"};

  /** Up to 12 owners with 0-3 ranges each in a small space (so overlaps are common); few distinct times (ties). */
  private static List<Owner> owners(long seed, int families) {
    SplittableRandom r = new SplittableRandom(seed);
    List<Owner> out = new ArrayList<>();
    Set<String> names = new HashSet<>();
    int n = r.nextInt(13);
    for (int i = 0; i < n; i++) {
      String kind = KINDS[r.nextInt(2)];
      String name = "p" + r.nextInt(20);
      if (!names.add(kind + "/" + name)) {
        continue;
      }
      List<IpRange> ranges = new ArrayList<>();
      for (int k = r.nextInt(4); k > 0; k--) {
        IpFamily f = families == 0 ? IpFamily.IPV4 : families == 1 ? IpFamily.IPV6 : r.nextBoolean() ? IpFamily.IPV4
            : IpFamily.IPV6;
        ranges.add(range(r, f));
      }
      Instant created = r.nextInt(8) == 0 ? null : T0.plusSeconds(r.nextInt(4));
      out.add(new Owner(kind, name, created, ranges));
    }
    return out;
  }

  /** A CIDR or a start-end range inside 256 addresses of the family. */
  private static IpRange range(SplittableRandom r, IpFamily f) {
    String base = f == IpFamily.IPV4 ? "10.0.0." : "2001:db8::";
    if (r.nextBoolean()) {
      int prefix = 3 + r.nextInt(6); // host bits: /29../24 (v4), /125../120 (v6)
      int size = 1 << prefix;
      int start = r.nextInt(256 / size) * size;
      return IpRange.parse(base + (f == IpFamily.IPV4 ? start : Integer.toHexString(start)) + "/"
          + (f.bits() - prefix));
    }
    int a = r.nextInt(256);
    int b = Math.min(255, a + r.nextInt(40));
    Ip first = Ip.parse(base + (f == IpFamily.IPV4 ? a : Integer.toHexString(a)));
    Ip last = Ip.parse(base + (f == IpFamily.IPV4 ? b : Integer.toHexString(b)));
    return IpRange.of(first, last);
  }

  private static boolean overlap(Owner a, Owner b) {
    return a.ranges().stream().anyMatch(x -> b.ranges().stream().anyMatch(x::overlaps));
  }

  @Test
  void noTwoAcceptedOwnersOverlapAndEveryOwnerIsDecidedOnce() {
    qt().withExamples(400).forAll(longs().all(), integers().between(0, 2)).checkAssert((seed, families) -> {
      List<Owner> owners = owners(seed, families);
      Decision d = PoolOverlaps.decide(owners);
      List<Owner> accepted = d.accepted();
      for (int i = 0; i < accepted.size(); i++) {
        for (int j = i + 1; j < accepted.size(); j++) {
          assertThat(overlap(accepted.get(i), accepted.get(j))).as("seed %d: %s and %s", seed,
              accepted.get(i), accepted.get(j)).isFalse();
        }
      }
      List<Owner> all = new ArrayList<>(accepted);
      d.refused().forEach(x -> all.add(x.owner()));
      assertThat(all).as("seed %d", seed).containsExactlyInAnyOrderElementsOf(owners);
    });
  }

  @Test
  void everyRefusalIsByAnOlderAcceptedOwnerAndListsRealOverlaps() {
    qt().withExamples(400).forAll(longs().all(), integers().between(0, 2)).checkAssert((seed, families) -> {
      Decision d = PoolOverlaps.decide(owners(seed, families));
      for (Refusal r : d.refused()) {
        assertThat(r.overlaps()).as("seed %d", seed).isNotEmpty();
        assertThat(r.message()).as("seed %d", seed).isNotBlank();
        for (Overlap o : r.overlaps()) {
          assertThat(d.accepted()).as("seed %d", seed).contains(o.other());
          assertThat(PoolOverlaps.AGE.compare(o.other(), r.owner())).as("seed %d", seed).isNegative();
          assertThat(r.owner().ranges()).contains(o.range());
          assertThat(o.other().ranges()).contains(o.otherRange());
          assertThat(o.range().overlaps(o.otherRange())).as("seed %d: %s", seed, o.message()).isTrue();
        }
      }
      // An accepted owner overlaps no older accepted owner, and one overlapping nobody is never refused.
      for (Refusal r : d.refused()) {
        List<Owner> older = d.accepted().stream().filter(a -> PoolOverlaps.AGE.compare(a, r.owner()) < 0).toList();
        assertThat(older.stream().anyMatch(a -> overlap(a, r.owner()))).as("seed %d", seed).isTrue();
      }
    });
  }

  @Test
  void theDecisionDoesNotDependOnTheOrderOfTheOwners() {
    qt().withExamples(300).forAll(longs().all(), integers().between(0, 2)).checkAssert((seed, families) -> {
      List<Owner> owners = owners(seed, families);
      Decision d = PoolOverlaps.decide(owners);
      List<Owner> shuffled = new ArrayList<>(owners);
      Collections.shuffle(shuffled, new Random(seed));
      Decision again = PoolOverlaps.decide(shuffled);
      assertThat(again).as("seed %d", seed).isEqualTo(d);
      assertThat(again.refused().stream().map(Refusal::message).toList())
          .isEqualTo(d.refused().stream().map(Refusal::message).toList());
    });
  }

  @Test
  void theOldestOwnerIsNeverRefused() {
    qt().withExamples(300).forAll(longs().all(), integers().between(0, 2)).checkAssert((seed, families) -> {
      List<Owner> owners = owners(seed, families);
      Decision d = PoolOverlaps.decide(owners);
      owners.stream().min(PoolOverlaps.AGE).ifPresent(oldest -> {
        assertThat(d.accepted()).as("seed %d", seed).contains(oldest);
        assertThat(d.refusal(oldest.kind(), oldest.name())).isEmpty();
      });
    });
  }
}
