package org.ipamoperators.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;
import static org.quicktheories.generators.SourceDSL.strings;

import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.pool.Pool;
import org.junit.jupiter.api.Test;

/** Allocator invariants over generated pools, seeds and owner keys (QuickTheories). */
class AllocatorPropertiesTest {

  /** A small pool from a seed: one or two ranges, some reserved addresses, IPv4 or IPv6. */
  private static Pool pool(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    boolean v6 = r.nextBoolean();
    int prefix = v6 ? 118 + r.nextInt(7) : 22 + r.nextInt(7);
    String base = v6 ? "2001:db8:" + Integer.toHexString(r.nextInt(0xffff)) + "::/" + prefix
        : "10." + r.nextInt(256) + ".0.0/" + prefix;
    Pool p = Pool.of("p", List.of(base), List.of());
    Ip first = p.ranges().get(0).first();
    List<String> reserved = new java.util.ArrayList<>();
    for (int i = 0; i < r.nextInt(4); i++) {
      Ip ip = first;
      for (int k = r.nextInt(8); k > 0; k--) {
        ip = ip.next();
      }
      reserved.add(ip.toString());
    }
    return Pool.of("p", List.of(base), reserved);
  }

  @Test
  void noAddressTwiceAndEveryAllocationUsable() {
    qt().withExamples(150).forAll(longs().all(), integers().between(0, 2)).checkAssert((seed, s) -> {
      Pool pool = pool(seed);
      IpFamily family = pool.families().iterator().next();
      AllocationStrategy strategy = AllocationStrategy.values()[s];
      Allocator a = Allocator.create(pool, AllocatorOptions.of(strategy).withSeed(seed));
      Set<Ip> seen = new HashSet<>();
      int n = 0;
      Optional<Ip> ip;
      while ((ip = a.allocate(family, "owner-" + n++)).isPresent()) {
        assertThat(seen.add(ip.get())).as("seed %d: %s twice", seed, ip.get()).isTrue();
        assertThat(pool.whyUnusable(ip.get())).as("seed %d", seed).isEmpty();
      }
      assertThat(java.math.BigInteger.valueOf(seen.size())).isEqualTo(pool.capacity(family));
    });
  }

  @Test
  void releaseThenAllocateGivesTheAddressBackWhenItIsTheOnlyOneFree() {
    qt().withExamples(100).forAll(longs().all(), integers().between(0, 2)).checkAssert((seed, s) -> {
      Pool pool = pool(seed);
      IpFamily family = pool.families().iterator().next();
      AllocationStrategy strategy = AllocationStrategy.values()[s];
      Allocator a = Allocator.create(pool, AllocatorOptions.of(strategy).withSeed(seed));
      List<Ip> all = new java.util.ArrayList<>();
      Optional<Ip> ip;
      while ((ip = a.allocate(family, "o" + all.size())).isPresent()) {
        all.add(ip.get());
      }
      Ip back = all.get(new SplittableRandom(seed).nextInt(all.size()));
      assertThat(a.release(back)).isTrue();
      assertThat(a.allocate(family, "whoever")).as("seed %d", seed).contains(back);
    });
  }

  @Test
  void stickyIsStableOnAFreshPool() {
    qt().withExamples(200).forAll(longs().all(), strings().basicLatinAlphabet().ofLengthBetween(1, 40))
        .checkAssert((seed, owner) -> {
          Pool pool = pool(seed);
          IpFamily family = pool.families().iterator().next();
          Ip first = Allocator.create(pool, AllocatorOptions.of(AllocationStrategy.STICKY))
              .allocate(family, owner).orElseThrow();
          Ip again = Allocator.create(pool, AllocatorOptions.of(AllocationStrategy.STICKY).withSeed(seed + 1))
              .allocate(family, owner).orElseThrow();
          assertThat(again).as("seed %d owner %s", seed, owner).isEqualTo(first);
        });
  }
}
