package org.ipamoperators.core.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.List;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.junit.jupiter.api.Test;

class PoolTest {

  @Test
  void cidrWithHostBitsNamesTheNetworkItProbablyMeant() {
    assertThatThrownBy(() -> Pool.of("p", List.of("10.0.0.5/24"), List.of()))
        .isInstanceOf(InvalidPoolException.class)
        .hasMessageContaining("10.0.0.5/24")
        .hasMessageContaining("did you mean 10.0.0.0/24");
    assertThat(Pool.validate("p", List.of("2001:db8::1/64"), List.of()))
        .singleElement().extracting(PoolProblem::message).asString()
        .contains("did you mean 2001:db8::/64");
  }

  @Test
  void everyProblemIsReportedNotJustTheFirst() {
    List<PoolProblem> problems = Pool.validate("p",
        List.of("10.0.0.0/24", "10.0.0.128/25", "not-an-ip", "10.0.1.9-10.0.1.1"),
        List.of("10.9.9.9"));
    assertThat(problems).extracting(PoolProblem::value)
        .contains("10.0.0.128/25", "not-an-ip", "10.0.1.9-10.0.1.1");
    assertThat(problems).extracting(PoolProblem::message)
        .anyMatch(m -> m.contains("overlap"))
        .anyMatch(m -> m.contains("'not-an-ip' is not an address"))
        .anyMatch(m -> m.contains("starts after it ends; write 10.0.1.1-10.0.1.9"));
  }

  @Test
  void reservedOutsideThePoolIsRejectedNamingTheValue() {
    assertThat(Pool.validate("p", List.of("192.0.2.0/24"), List.of("198.51.100.7")))
        .singleElement().satisfies(p -> {
          assertThat(p.value()).isEqualTo("198.51.100.7");
          assertThat(p.message()).contains("outside the pool (192.0.2.0/24)");
        });
    assertThat(Pool.validate("p", List.of("192.0.2.0/25"), List.of("192.0.2.120-192.0.2.130")))
        .singleElement().extracting(PoolProblem::message).asString().contains("partly outside");
    // a reserved range spanning two adjacent pool ranges is inside the pool
    assertThat(Pool.validate("p", List.of("192.0.2.0/25", "192.0.2.128/25"),
        List.of("192.0.2.120-192.0.2.130"))).isEmpty();
  }

  @Test
  void mixedFamilyRangeAndEmptyPoolAreRejected() {
    assertThat(Pool.validate("p", List.of("192.0.2.1-2001:db8::1"), List.of()))
        .singleElement().extracting(PoolProblem::message).asString().contains("mixes IPv4 and IPv6");
    assertThat(Pool.validate("p", List.of(), List.of()))
        .singleElement().extracting(PoolProblem::message).asString().contains("has no ranges");
    assertThat(Pool.validate("p", List.of("::/0"), List.of()))
        .singleElement().extracting(PoolProblem::message).asString().contains("whole IPv6 space");
  }

  @Test
  void ipv4NetworkAndBroadcastAreNotUsableExceptInSlash31AndSlash32() {
    Pool p24 = Pool.of("p", List.of("192.0.2.0/24"), List.of());
    assertThat(p24.capacity(IpFamily.IPV4)).isEqualTo(BigInteger.valueOf(254));
    assertThat(p24.whyUnusable(Ip.parse("192.0.2.0"))).hasValueSatisfying(
        m -> assertThat(m).contains("network address of 192.0.2.0/24"));
    assertThat(p24.whyUnusable(Ip.parse("192.0.2.255"))).hasValueSatisfying(
        m -> assertThat(m).contains("broadcast address"));
    assertThat(Pool.of("p", List.of("192.0.2.0/31"), List.of()).capacity(IpFamily.IPV4))
        .isEqualTo(BigInteger.TWO);
    assertThat(Pool.of("p", List.of("192.0.2.7/32"), List.of()).capacity(IpFamily.IPV4))
        .isEqualTo(BigInteger.ONE);
    assertThat(Pool.of("p", List.of("192.0.2.7"), List.of()).capacity(IpFamily.IPV4))
        .isEqualTo(BigInteger.ONE);
    // explicit ranges are taken as written
    assertThat(Pool.of("p", List.of("192.0.2.0-192.0.2.255"), List.of()).capacity(IpFamily.IPV4))
        .isEqualTo(BigInteger.valueOf(256));
  }

  @Test
  void ipv6PoolsUseEveryAddressButTheAnycastOnes() {
    // 1 Subnet-Router anycast and 2 x 128 reserved subnet anycast addresses per /64 edge (Ipv6AnycastTest)
    assertThat(Pool.of("p", List.of("2001:db8::/64"), List.of()).capacity(IpFamily.IPV6))
        .isEqualTo(BigInteger.TWO.pow(64).subtract(BigInteger.valueOf(257)));
    // 2001:db8:: is the Subnet-Router anycast address of the /127 and of its /64
    assertThat(Pool.of("p", List.of("2001:db8::/127"), List.of()).capacity(IpFamily.IPV6))
        .isEqualTo(BigInteger.ONE);
    assertThat(Pool.of("p", List.of("2001:db8::/48"), List.of("2001:db8::/64"))
        .capacity(IpFamily.IPV6)).isEqualTo(BigInteger.TWO.pow(80).subtract(BigInteger.TWO.pow(64))
            .subtract(BigInteger.valueOf(257)));
  }

  @Test
  void dualStackPoolHasBothFamilies() {
    Pool p = Pool.of("p", List.of("192.0.2.0/30", "2001:db8::/126"), List.of("192.0.2.1"));
    assertThat(p.families()).containsExactlyInAnyOrder(IpFamily.IPV4, IpFamily.IPV6);
    assertThat(p.capacity(IpFamily.IPV4)).isEqualTo(BigInteger.ONE);
    assertThat(p.capacity(IpFamily.IPV6)).isEqualTo(BigInteger.valueOf(3)); // not 2001:db8:: (anycast)
    assertThat(p.whyUnusable(Ip.parse("192.0.2.1"))).hasValueSatisfying(
        m -> assertThat(m).contains("reserved"));
    assertThat(p.whyUnusable(Ip.parse("203.0.113.1"))).hasValueSatisfying(
        m -> assertThat(m).contains("outside pool 'p'"));
  }
}
