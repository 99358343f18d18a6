package org.ipamoperators.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.pool.Pool;
import org.junit.jupiter.api.Test;

class AllocatorTest {

  private static Allocator allocator(AllocationStrategy s, String... ranges) {
    return Allocator.create(Pool.of("p", List.of(ranges), List.of()), AllocatorOptions.of(s));
  }

  @Test
  void firstFreeSkipsNetworkAndReservedAndFillsInOrder() {
    Pool pool = Pool.of("p", List.of("192.0.2.0/29"), List.of("192.0.2.2"));
    Allocator a = Allocator.create(pool, AllocatorOptions.of(AllocationStrategy.FIRST_FREE));
    assertThat(a.allocate(IpFamily.IPV4)).contains(Ip.parse("192.0.2.1"));
    assertThat(a.allocate(IpFamily.IPV4)).contains(Ip.parse("192.0.2.3"));
    assertThat(a.release(Ip.parse("192.0.2.1"))).isTrue();
    assertThat(a.allocate(IpFamily.IPV4)).contains(Ip.parse("192.0.2.1"));
  }

  @Test
  void onePoolOfOneAddressAndAFullyReservedPool() {
    Allocator one = allocator(AllocationStrategy.RANDOM, "192.0.2.9/32");
    assertThat(one.allocate(IpFamily.IPV4)).contains(Ip.parse("192.0.2.9"));
    assertThat(one.allocate(IpFamily.IPV4)).isEmpty();
    assertThat(one.freeCount(IpFamily.IPV4)).isZero();

    Allocator reserved = Allocator.create(
        Pool.of("p", List.of("192.0.2.0/30"), List.of("192.0.2.1-192.0.2.2")),
        AllocatorOptions.of(AllocationStrategy.FIRST_FREE));
    assertThat(reserved.capacity(IpFamily.IPV4)).isZero();
    assertThat(reserved.allocate(IpFamily.IPV4)).isEmpty();
    assertThat(reserved.claim(Ip.parse("192.0.2.1"))).isEqualTo(ClaimOutcome.RESERVED);
    assertThat(reserved.claim(Ip.parse("192.0.2.0"))).isEqualTo(ClaimOutcome.RESERVED);
    assertThat(reserved.claim(Ip.parse("192.0.2.4"))).isEqualTo(ClaimOutcome.OUTSIDE_POOL);
  }

  @Test
  void slash31HandsOutBothAddressesAndSlash127OnlyTheOneThatIsNoAnycast() {
    Allocator a = allocator(AllocationStrategy.FIRST_FREE, "192.0.2.0/31");
    assertThat(a.allocate(IpFamily.IPV4)).contains(Ip.parse("192.0.2.0"));
    assertThat(a.allocate(IpFamily.IPV4)).contains(Ip.parse("192.0.2.1"));
    assertThat(a.allocate(IpFamily.IPV4)).isEmpty();
    // the first address of an IPv6 CIDR is its Subnet-Router anycast address (SpecialAddresses)
    Allocator six = allocator(AllocationStrategy.FIRST_FREE, "2001:db8::4/127");
    assertThat(six.allocate(IpFamily.IPV6)).contains(Ip.parse("2001:db8::5"));
    assertThat(six.allocate(IpFamily.IPV6)).isEmpty();
  }

  @Test
  void ipv6Slash64AndSlash48WorkLikeASlash24() {
    for (String cidr : List.of("2001:db8::/64", "2001:db8::/48")) {
      Allocator a = allocator(AllocationStrategy.RANDOM, cidr);
      IpRange r = IpRange.parse(cidr);
      Set<Ip> got = new HashSet<>();
      for (int i = 0; i < 20_000; i++) {
        Ip ip = a.allocate(IpFamily.IPV6).orElseThrow();
        assertThat(r.contains(ip)).isTrue();
        assertThat(got.add(ip)).as("handed out twice: %s", ip).isTrue();
      }
      // less the IPv6 anycast addresses of the first and last /64 (257 each, ProtocolReserved)
      BigInteger anycast = BigInteger.valueOf(cidr.endsWith("/64") ? 257 : 2 * 257);
      assertThat(a.freeCount(IpFamily.IPV6)).isEqualTo(r.size().subtract(anycast).subtract(BigInteger.valueOf(20_000)));
      assertThat(a.freeRangeCount(IpFamily.IPV6)).isGreaterThan(19_000);
      Ip any = got.iterator().next();
      assertThat(a.release(any)).isTrue();
      assertThat(a.claim(any)).isEqualTo(ClaimOutcome.CLAIMED);
    }
    Allocator first = allocator(AllocationStrategy.FIRST_FREE, "2001:db8::/48");
    assertThat(first.allocate(IpFamily.IPV6)).contains(Ip.parse("2001:db8::1")); // :: is Subnet-Router anycast
    assertThat(first.allocate(IpFamily.IPV6)).contains(Ip.parse("2001:db8::2"));
  }

  @Test
  void randomIsUniformOverTheFreeSpace() {
    // 8 free addresses in two ranges of unequal size; each should come first about 1/8 of the time.
    Map<Ip, Integer> counts = new HashMap<>();
    int trials = 16_000;
    Pool pool = Pool.of("p", List.of("192.0.2.0/30", "198.51.100.0/29"), List.of("198.51.100.1"));
    Allocator a = Allocator.create(pool, AllocatorOptions.of(AllocationStrategy.RANDOM).withSeed(7));
    assertThat(a.freeCount(IpFamily.IPV4)).isEqualTo(BigInteger.valueOf(7));
    for (int i = 0; i < trials; i++) {
      Ip ip = a.allocate(IpFamily.IPV4).orElseThrow();
      counts.merge(ip, 1, Integer::sum);
      a.release(ip);
    }
    assertThat(counts).hasSize(7);
    double expected = trials / 7.0;
    double chi2 = counts.values().stream().mapToDouble(c -> (c - expected) * (c - expected) / expected).sum();
    assertThat(chi2).as("chi-square with 6 degrees of freedom, p=0.001 bound").isLessThan(22.46);
  }

  @Test
  void randomIsRepeatableForASeed() {
    List<Ip> first = drawRandom(42);
    assertThat(drawRandom(42)).isEqualTo(first);
    assertThat(drawRandom(43)).isNotEqualTo(first);
  }

  private static List<Ip> drawRandom(long seed) {
    Allocator a = Allocator.create(Pool.of("p", List.of("10.0.0.0/8"), List.of()),
        AllocatorOptions.of(AllocationStrategy.RANDOM).withSeed(seed));
    return java.util.stream.IntStream.range(0, 50).mapToObj(i -> a.allocate(IpFamily.IPV4).orElseThrow()).toList();
  }

  @Test
  void stickyGivesTheSameAddressOnAFreshPoolWhateverTheOrder() {
    List<String> owners = java.util.stream.IntStream.range(0, 200).mapToObj(i -> "ns-" + i).toList();
    Map<String, Ip> first = new HashMap<>();
    Allocator a = allocator(AllocationStrategy.STICKY, "10.0.0.0/16");
    owners.forEach(o -> first.put(o, a.allocate(IpFamily.IPV4, o).orElseThrow()));
    Allocator b = allocator(AllocationStrategy.STICKY, "10.0.0.0/16");
    Map<String, Ip> second = new HashMap<>();
    new java.util.ArrayDeque<>(owners).descendingIterator().forEachRemaining(o -> second.put(o, b.allocate(IpFamily.IPV4, o).orElseThrow()));
    // Collisions are resolved by order, so compare the owners whose hash slot was uncontended.
    long same = owners.stream().filter(o -> first.get(o).equals(second.get(o))).count();
    assertThat(same).isGreaterThanOrEqualTo(owners.size() - 2);
    assertThat(new HashSet<>(first.values())).hasSize(owners.size());
    assertThatThrownBy(() -> b.allocate(IpFamily.IPV4)).hasMessageContaining("owner key");
  }

  @Test
  void cooldownKeepsAReleasedAddressBackWhileOthersAreFree() {
    MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    Allocator a = Allocator.create(Pool.of("p", List.of("192.0.2.0/30"), List.of()),
        AllocatorOptions.of(AllocationStrategy.FIRST_FREE).withCooldown(Duration.ofMinutes(5), clock));
    Ip one = a.allocate(IpFamily.IPV4).orElseThrow();
    assertThat(one).isEqualTo(Ip.parse("192.0.2.1"));
    a.release(one);
    assertThat(a.isFree(one)).isTrue();
    assertThat(a.allocate(IpFamily.IPV4)).contains(Ip.parse("192.0.2.2"));
    // nothing else free: the cooling address is better than none
    assertThat(a.allocate(IpFamily.IPV4)).contains(one);
    a.release(one);
    clock.advance(Duration.ofMinutes(5));
    a.release(Ip.parse("192.0.2.2"));
    // 192.0.2.1 has cooled down, 192.0.2.2 has not
    assertThat(a.allocate(IpFamily.IPV4)).contains(one);
    assertThat(a.allocate(IpFamily.IPV4)).contains(Ip.parse("192.0.2.2"));
  }

  @Test
  void familiesAreIndependentInADualStackPool() {
    Allocator a = allocator(AllocationStrategy.FIRST_FREE, "192.0.2.0/30", "2001:db8::/126");
    assertThat(a.allocate(IpFamily.IPV6)).contains(Ip.parse("2001:db8::1"));
    assertThat(a.allocate(IpFamily.IPV4)).contains(Ip.parse("192.0.2.1"));
    Allocator v4only = allocator(AllocationStrategy.FIRST_FREE, "192.0.2.0/30");
    assertThat(v4only.allocate(IpFamily.IPV6)).isEmpty();
    assertThat(v4only.claim(Ip.parse("2001:db8::1"))).isEqualTo(ClaimOutcome.OUTSIDE_POOL);
  }
}
