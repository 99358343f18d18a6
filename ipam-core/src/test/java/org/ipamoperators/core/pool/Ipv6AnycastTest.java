package org.ipamoperators.core.pool;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.List;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.allocation.Allocator;
import org.ipamoperators.core.allocation.AllocatorOptions;
import org.junit.jupiter.api.Test;

/** IPv6 anycast addresses (RFC 4291 2.6.1, RFC 2526) are never handed out. */
class Ipv6AnycastTest {

  private static Pool pool(String... ranges) {
    return Pool.of("p", List.of(ranges), List.of());
  }

  @Test
  void theSubnetRouterAnycastAddressOfASlash64IsNotHandedOut() {
    // An OVN EgressIPAM on this /64 gave a namespace 2001:db8:5::, which routers answer as anycast.
    Pool p = pool("2001:db8:5::/64");
    Allocator a = Allocator.create(p, AllocatorOptions.of(AllocationStrategy.FIRST_FREE));
    assertThat(a.allocate(IpFamily.IPV6)).contains(Ip.parse("2001:db8:5::1"));
    assertThat(p.isUsable(Ip.parse("2001:db8:5::"))).isFalse();
    assertThat(p.whyUnusable(Ip.parse("2001:db8:5::"))).hasValueSatisfying(
        w -> assertThat(w).contains("Subnet-Router anycast").contains("RFC 4291"));
  }

  @Test
  void theReservedSubnetAnycastAddressesAreNotHandedOut() {
    Pool p = pool("2001:db8:5::/64");
    for (String reserved : List.of("2001:db8:5:0:fdff:ffff:ffff:ff80", "2001:db8:5:0:fdff:ffff:ffff:ffff",
        "2001:db8:5:0:ffff:ffff:ffff:ff80", "2001:db8:5:0:ffff:ffff:ffff:ffff")) {
      assertThat(p.isUsable(Ip.parse(reserved))).as(reserved).isFalse();
      assertThat(p.whyUnusable(Ip.parse(reserved))).hasValueSatisfying(w -> assertThat(w).contains("RFC 2526"));
    }
    for (String ordinary : List.of("2001:db8:5::1", "2001:db8:5:0:fdff:ffff:ffff:ff7f",
        "2001:db8:5:0:ffff:ffff:ffff:ff7f", "2001:db8:5:0:fe00::")) {
      assertThat(p.isUsable(Ip.parse(ordinary))).as(ordinary).isTrue();
    }
    // 2^64 less the Subnet-Router anycast address and twice 128 reserved anycast addresses
    assertThat(p.capacity(IpFamily.IPV6)).isEqualTo(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.valueOf(257)));
    assertThat(p.protocolReservedCount(IpFamily.IPV6)).isEqualTo(BigInteger.valueOf(257));
  }

  @Test
  void aDescendingRandomOrStickyAllocatorNeverReachesThem() {
    Pool p = pool("2001:db8:5::ff00-2001:db8:5::ffff", "2001:db8:6:0:ffff:ffff:ffff:ff00/120");
    // the /120 loses its own Subnet-Router anycast (ff00) and the top 128 (RFC 2526)
    assertThat(p.capacity(IpFamily.IPV6)).isEqualTo(BigInteger.valueOf(256 + 127));
    Allocator a = Allocator.create(p, AllocatorOptions.of(AllocationStrategy.RANDOM));
    for (int i = 0; i < 383; i++) {
      Ip ip = a.allocate(IpFamily.IPV6).orElseThrow();
      assertThat(p.whyUnusable(ip)).as(ip.toString()).isEmpty();
    }
    assertThat(a.allocate(IpFamily.IPV6)).isEmpty();
  }

  @Test
  void slicesAwayFromTheEdgesOfTheirSlash64LoseOnlyTheirOwnSubnetRouterAnycast() {
    assertThat(pool("2001:db8::100/120").capacity(IpFamily.IPV6)).isEqualTo(BigInteger.valueOf(255));
    assertThat(pool("2001:db8::/120").capacity(IpFamily.IPV6)).isEqualTo(BigInteger.valueOf(255));
    // a start-end range is no subnet: every address of it away from a /64's edges is used
    assertThat(pool("2001:db8::100-2001:db8::1ff").capacity(IpFamily.IPV6)).isEqualTo(BigInteger.valueOf(256));
  }

  @Test
  void smallRangesAndSingleAddressesNeverHandOutAnAnycastAddress() {
    // The first address of a /127 is its Subnet-Router anycast; 2001:db8:: is also the one of its /64.
    assertThat(pool("2001:db8::/127").capacity(IpFamily.IPV6)).isEqualTo(BigInteger.ONE);
    assertThat(pool("2001:db8::4/127").capacity(IpFamily.IPV6)).isEqualTo(BigInteger.ONE);
    assertThat(pool("2001:db8::5").capacity(IpFamily.IPV6)).isEqualTo(BigInteger.ONE);
    assertThat(pool("2001:db8::5/128").capacity(IpFamily.IPV6)).isEqualTo(BigInteger.ONE);
    for (String only : List.of("2001:db8::", "2001:db8::/128", "2001:db8:0:0:ffff:ffff:ffff:ffff")) {
      assertThat(Pool.validate("p", List.of(only), List.of())).as(only).singleElement()
          .satisfies(p -> assertThat(p.message()).contains("anycast"));
    }
  }

  @Test
  void aLargerPoolCutsTheEdgesOfItsFirstAndLastSlash64() {
    Pool p = pool("2001:db8::/48");
    assertThat(p.isUsable(Ip.parse("2001:db8::"))).isFalse();
    assertThat(p.isUsable(Ip.parse("2001:db8:0:ffff:ffff:ffff:ffff:ffff"))).isFalse();
    assertThat(p.isUsable(Ip.parse("2001:db8:0:ffff:fdff:ffff:ffff:ff80"))).isFalse();
    assertThat(p.protocolReservedCount(IpFamily.IPV6)).isEqualTo(BigInteger.valueOf(2 * 257));
  }

  @Test
  void ipv4IsUnchanged() {
    assertThat(pool("192.0.2.0/24").protocolReserved()).isEmpty();
    assertThat(pool("192.0.2.0/24").capacity(IpFamily.IPV4)).isEqualTo(BigInteger.valueOf(254));
  }
}
