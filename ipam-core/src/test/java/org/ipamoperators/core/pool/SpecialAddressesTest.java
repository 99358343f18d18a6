package org.ipamoperators.core.pool;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.List;
import java.util.Optional;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.allocation.Allocator;
import org.ipamoperators.core.allocation.AllocatorOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The addresses no pool hands out and no controller announces, and how pools treat them. */
class SpecialAddressesTest {

  @ParameterizedTest
  @ValueSource(strings = {"0.0.0.0", "0.1.2.3", "127.0.0.1", "127.255.255.254", "169.254.169.254", "169.254.0.1",
      "224.0.0.18", "239.255.255.250", "240.0.0.1", "255.255.255.255", "::", "::1", "::ffff:192.0.2.1",
      "fe80::1", "febf:ffff::1", "ff02::12", "ff0e::1"})
  void everyKindIsInTheTableWithItsName(String text) {
    Optional<String> why = SpecialAddresses.whyNeverAnnounced(Ip.parse(text));
    assertThat(why).as(text).isPresent();
    assertThat(why.get()).contains(Ip.parse(text).toString());
  }

  @Test
  void theMessagesSayWhatTheAddressIs() {
    assertThat(SpecialAddresses.whyNeverAnnounced(Ip.parse("169.254.169.254")).orElseThrow()).contains("metadata");
    assertThat(SpecialAddresses.whyNeverAnnounced(Ip.parse("127.0.0.1")).orElseThrow()).contains("loopback");
    assertThat(SpecialAddresses.whyNeverAnnounced(Ip.parse("255.255.255.255")).orElseThrow()).contains("broadcast");
    assertThat(SpecialAddresses.whyNeverAnnounced(Ip.parse("0.0.0.0")).orElseThrow()).contains("unspecified");
    assertThat(SpecialAddresses.whyNeverAnnounced(Ip.parse("ff02::1")).orElseThrow()).contains("multicast");
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.0.0.0", "126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0",
      "192.0.2.1", "223.255.255.255", "::2", "::fffe:ffff:ffff", "::1:0:0:0", "2001:db8::1", "fe7f::1", "fec0::1",
      "feff::1"})
  void ordinaryAddressesAreNot(String text) {
    assertThat(SpecialAddresses.whyNeverAnnounced(Ip.parse(text))).as(text).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"::/127", "::1/128", "::", "0.0.0.0/31", "0.0.0.0/8", "127.0.0.0/8", "127.0.0.1",
      "224.0.0.0/4", "169.254.0.0/16", "169.254.169.254", "fe80::/10", "ff00::/8", "255.255.255.255",
      "240.0.0.0/4", "::ffff:0:0/96", "2001:db8:5::", "2001:db8:5::/128",
      "2001:db8:5:0:ffff:ffff:ffff:ff80/121"})
  void aRangeOfOnlySuchAddressesIsRefused(String r) {
    List<PoolProblem> problems = Pool.validate("p", List.of(r), List.of());
    assertThat(problems).as(r).singleElement().satisfies(p -> {
      assertThat(p.value()).isEqualTo(r);
      assertThat(p.message()).contains(r).contains("never");
    });
  }

  @Test
  void aRangeWithSomeOfThemNeverHandsThemOut() {
    Pool p = Pool.of("p", List.of("126.255.255.250-127.0.0.5", "169.254.169.250-169.255.0.2"), List.of());
    assertThat(p.capacity(IpFamily.IPV4)).isEqualTo(BigInteger.valueOf(6 + 3));
    assertThat(p.whyUnusable(Ip.parse("127.0.0.1")).orElseThrow()).contains("loopback");
    assertThat(p.whyUnusable(Ip.parse("169.254.169.254")).orElseThrow()).contains("metadata");
    Allocator a = Allocator.create(p, AllocatorOptions.of(AllocationStrategy.RANDOM));
    for (int i = 0; i < 9; i++) {
      Ip ip = a.allocate(IpFamily.IPV4).orElseThrow();
      assertThat(SpecialAddresses.find(ip)).as(ip.toString()).isEmpty();
    }
    assertThat(a.allocate(IpFamily.IPV4)).isEmpty();
  }

  @Test
  void theSubnetRouterAnycastOfEveryPrefixLengthIsCut() {
    // 2001:db8::100/120 is a subnet of its own: its all-zero host address is its Subnet-Router anycast.
    Pool p = Pool.of("p", List.of("2001:db8::100/120", "2001:db8:1::/127", "2001:db8:2::8/126"), List.of());
    assertThat(p.isUsable(Ip.parse("2001:db8::100"))).isFalse();
    assertThat(p.whyUnusable(Ip.parse("2001:db8::100")).orElseThrow()).contains("Subnet-Router anycast");
    assertThat(p.isUsable(Ip.parse("2001:db8:1::"))).isFalse();
    assertThat(p.isUsable(Ip.parse("2001:db8:2::8"))).isFalse();
    assertThat(p.capacity(IpFamily.IPV6)).isEqualTo(BigInteger.valueOf(255 + 1 + 3));
    Allocator a = Allocator.create(p, AllocatorOptions.of(AllocationStrategy.FIRST_FREE));
    assertThat(a.allocate(IpFamily.IPV6)).contains(Ip.parse("2001:db8::101"));
    assertThat(SpecialAddresses.subnetRouterAnycast(p.ranges().get(0))).contains(Ip.parse("2001:db8::100"));
    assertThat(SpecialAddresses.subnetRouterAnycast(Pool.of("q", List.of("2001:db8::7"), List.of()).ranges().get(0)))
        .isEmpty();
  }

  @Test
  void aLargeRangeAroundThemIsCutWithoutWalkingIt() {
    // 0.0.0.0/0 less 0/8, 127/8, 169.254/16, 224/3 and the network and broadcast addresses (already in the table)
    Pool p = Pool.of("p", List.of("0.0.0.0/0"), List.of());
    long expected = (1L << 32) - 2 * (1L << 24) - (1L << 16) - (1L << 29);
    assertThat(p.capacity(IpFamily.IPV4)).isEqualTo(BigInteger.valueOf(expected));
    Pool v6 = Pool.of("p6", List.of("::/8"), List.of());
    assertThat(v6.isUsable(Ip.parse("::ffff:1.2.3.4"))).isFalse();
    assertThat(v6.isUsable(Ip.parse("::1"))).isFalse();
    assertThat(v6.isUsable(Ip.parse("::2"))).isTrue();
  }
}
