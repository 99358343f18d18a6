package org.ipamoperators.core.address;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import org.junit.jupiter.api.Test;

class IpRangeTest {

  @Test
  void parsesTheThreeSpellings() {
    assertThat(IpRange.parse("192.0.2.0/24").size()).isEqualTo(BigInteger.valueOf(256));
    assertThat(IpRange.parse(" 192.0.2.10 - 192.0.2.20 ").size()).isEqualTo(BigInteger.valueOf(11));
    assertThat(IpRange.parse("2001:db8::5").size()).isEqualTo(BigInteger.ONE);
    assertThat(IpRange.parse("2001:db8::/127").last()).isEqualTo(Ip.parse("2001:db8::1"));
  }

  @Test
  void formatsCanonically() {
    assertThat(Ip.parse("2001:0db8:0000:0000:0000:0000:0000:0001").toString()).isEqualTo("2001:db8::1");
    assertThat(Ip.parse("192.0.2.1").toString()).isEqualTo("192.0.2.1");
    assertThat(Ip.parse("203.0.113.255").toBigInteger()).isEqualTo(BigInteger.valueOf(0xCB0071FFL));
    assertThat(Ip.fromBigInteger(IpFamily.IPV6, Ip.parse("2001:db8::ffff").toBigInteger()))
        .isEqualTo(Ip.parse("2001:db8::ffff"));
  }

  @Test
  void nextAndPreviousCrossWordBoundaries() {
    Ip a = Ip.parse("2001:db8::ffff:ffff:ffff:ffff");
    assertThat(a.next()).isEqualTo(Ip.parse("2001:db8:0:1::"));
    assertThat(a.next().previous()).isEqualTo(a);
    assertThat(Ip.parse("255.255.255.255").next()).isNull();
    assertThat(Ip.parse("0.0.0.0").previous()).isNull();
  }

  @Test
  void rejectsWithAMessageNamingTheValue() {
    assertThatThrownBy(() -> IpRange.parse("10.0.0.5/24")).hasMessageContaining("did you mean 10.0.0.0/24?");
    assertThatThrownBy(() -> IpRange.parse("banana")).hasMessageContaining("'banana' is not an address");
    assertThatThrownBy(() -> IpRange.parse("")).hasMessageContaining("empty value");
    assertThatThrownBy(() -> Ip.parse("192.0.2.0/24")).hasMessageContaining("not a single address");
    assertThatThrownBy(() -> IpRange.parse("192.0.2.1-banana")).hasMessageContaining("'banana' is not a single address");
  }
}
