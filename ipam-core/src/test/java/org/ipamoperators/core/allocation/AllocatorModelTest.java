package org.ipamoperators.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.pool.Pool;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Random operation sequences checked step by step against a brute-force model (a sorted set of
 * every free address). Small pools with gaps, reserved addresses and IPv6 word boundaries; enough
 * operations to split and merge the tree's leaves many times. Each case prints its seed on failure.
 */
class AllocatorModelTest {

  static Stream<Arguments> cases() {
    List<Arguments> out = new ArrayList<>();
    String[][] pools = {
        {"192.0.2.0/24,198.51.100.16-198.51.100.200,203.0.112.0/22", "192.0.2.7,203.0.113.64/27"},
        {"2001:db8::ffff:ffff:ffff:fe00-2001:db8:0:1::1ff", "2001:db8:0:1::"},
        {"2001:db8::/120,2001:db8:ffff::/120", "2001:db8::1"},
        {"192.0.2.9", ""},
    };
    long seed = 20261122L;
    for (String[] p : pools) {
      for (AllocationStrategy s : AllocationStrategy.values()) {
        for (boolean cooldown : new boolean[] {false, true}) {
          out.add(Arguments.of(p[0], p[1], s, cooldown, seed++));
        }
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0} {2} cooldown={3} seed={4}")
  @MethodSource("cases")
  void matchesTheModel(String ranges, String reserved, AllocationStrategy strategy, boolean cooldown,
      long seed) {
    Pool pool = Pool.of("p", List.of(ranges.split(",")),
        reserved.isEmpty() ? List.of() : List.of(reserved.split(",")));
    IpFamily family = pool.families().iterator().next();
    MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    Duration cd = cooldown ? Duration.ofSeconds(30) : Duration.ZERO;
    Allocator a = Allocator.create(pool, AllocatorOptions.of(strategy).withSeed(seed).withCooldown(cd, clock));

    TreeSet<BigInteger> free = new TreeSet<>();
    for (IpRange r : pool.usable(family)) {
      for (BigInteger v = r.first().toBigInteger(); v.compareTo(r.last().toBigInteger()) <= 0;
          v = v.add(BigInteger.ONE)) {
        free.add(v);
      }
    }
    LinkedHashMap<BigInteger, Long> cooling = new LinkedHashMap<>();
    List<BigInteger> allocated = new ArrayList<>();
    SplittableRandom rnd = new SplittableRandom(seed);
    BigInteger lo = pool.ranges().stream().map(r -> r.first().toBigInteger()).min(BigInteger::compareTo).orElseThrow();
    BigInteger hi = pool.ranges().stream().map(r -> r.last().toBigInteger()).max(BigInteger::compareTo).orElseThrow();
    BigInteger span = hi.subtract(lo).add(BigInteger.valueOf(3));

    String ctx = "seed " + seed + " pool " + ranges;
    for (int step = 0; step < 4000; step++) {
      int op = rnd.nextInt(10);
      if (op < 5) {
        // allocate
        long now = clock.millis();
        cooling.entrySet().removeIf(e -> {
          if (e.getValue() <= now) {
            free.add(e.getKey());
            return true;
          }
          return false;
        });
        Optional<Ip> got = a.allocate(family, "owner-" + rnd.nextInt(50));
        if (free.isEmpty() && cooling.isEmpty()) {
          assertThat(got).as(ctx).isEmpty();
          continue;
        }
        assertThat(got).as(ctx + " step " + step).isPresent();
        BigInteger v = got.get().toBigInteger();
        if (free.isEmpty()) {
          BigInteger oldest = cooling.keySet().iterator().next();
          assertThat(v).as(ctx + " takes the oldest cooling address").isEqualTo(oldest);
          cooling.remove(v);
        } else {
          assertThat(free).as(ctx + " step " + step + " allocated a free address").contains(v);
          if (strategy == AllocationStrategy.FIRST_FREE) {
            assertThat(v).as(ctx).isEqualTo(free.first());
          }
          free.remove(v);
        }
        allocated.add(v);
      } else if (op < 8 && !allocated.isEmpty()) {
        BigInteger v = allocated.remove(rnd.nextInt(allocated.size()));
        assertThat(a.release(Ip.fromBigInteger(family, v))).as(ctx).isTrue();
        if (cooldown) {
          cooling.put(v, clock.millis() + cd.toMillis());
        } else {
          free.add(v);
        }
        assertThat(a.release(Ip.fromBigInteger(family, v))).as(ctx + " double release").isFalse();
      } else if (op == 8) {
        // claim a specific address, possibly outside the pool or reserved
        BigInteger v = lo.subtract(BigInteger.ONE).add(new BigInteger(span.bitLength() + 4, new java.util.Random(rnd.nextLong())).mod(span));
        if (v.signum() < 0 || v.bitLength() > family.bits()) {
          continue;
        }
        Ip ip = Ip.fromBigInteger(family, v);
        ClaimOutcome outcome = a.claim(ip);
        if (free.contains(v) || cooling.containsKey(v)) {
          assertThat(outcome).as(ctx + " claim " + ip).isEqualTo(ClaimOutcome.CLAIMED);
          free.remove(v);
          cooling.remove(v);
          allocated.add(v);
        } else if (!pool.contains(ip)) {
          assertThat(outcome).as(ctx + " claim " + ip).isEqualTo(ClaimOutcome.OUTSIDE_POOL);
        } else if (!pool.isUsable(ip)) {
          assertThat(outcome).as(ctx + " claim " + ip).isEqualTo(ClaimOutcome.RESERVED);
        } else {
          assertThat(outcome).as(ctx + " claim " + ip).isEqualTo(ClaimOutcome.ALREADY_ALLOCATED);
        }
      } else {
        clock.advance(Duration.ofSeconds(rnd.nextInt(20)));
      }
      if (step % 97 == 0) {
        assertThat(a.freeCount(family)).as(ctx).isEqualTo(BigInteger.valueOf(free.size() + cooling.size()));
        for (BigInteger v : allocated) {
          assertThat(a.isFree(Ip.fromBigInteger(family, v))).as(ctx).isFalse();
        }
        for (BigInteger v : free.stream().limit(50).toList()) {
          assertThat(a.isFree(Ip.fromBigInteger(family, v))).as(ctx).isTrue();
        }
      }
    }
    assertThat(a.allocatedCount(family)).as(ctx).isEqualTo(BigInteger.valueOf(allocated.size()));
    Map<BigInteger, Boolean> seen = new java.util.HashMap<>();
    for (BigInteger v : allocated) {
      assertThat(seen.put(v, true)).as(ctx + " handed out twice: " + v).isNull();
    }
  }
}
