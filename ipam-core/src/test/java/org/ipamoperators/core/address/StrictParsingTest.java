package org.ipamoperators.core.address;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.ipamoperators.core.pool.Pool;
import org.ipamoperators.core.pool.PoolProblem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Lenient address forms would silently become other addresses; every one is refused with the fix. */
class StrictParsingTest {

  @Test
  void zeroPaddedOctetIsRefusedWithTheDecimalMeaning() {
    // The library's default reads 010 as octal: 192.168.8.0/24.
    assertThatThrownBy(() -> IpRange.parse("192.168.010.0/24"))
        .isInstanceOf(InvalidAddressException.class)
        .hasMessageContaining("leading zero").hasMessageContaining("did you mean 192.168.10.0/24?");
    assertThatThrownBy(() -> Ip.parse("010.0.0.1")).hasMessageContaining("did you mean 10.0.0.1?");
    assertThatThrownBy(() -> IpRange.parse("192.0.2.1-192.0.2.010"))
        .hasMessageContaining("did you mean 192.0.2.10?");
    assertThatThrownBy(() -> IpRange.parse("192.0.2.0/024")).hasMessageContaining("did you mean 192.0.2.0/24?");
  }

  @Test
  void shortFormsAreRefused() {
    assertThatThrownBy(() -> Ip.parse("10.1")).hasMessageContaining("2 of the 4 parts")
        .hasMessageContaining("10.0.0.1").hasMessageContaining("10.1.0.0");
    assertThatThrownBy(() -> IpRange.parse("192.168.1/24")).hasMessageContaining("3 of the 4 parts")
        .hasMessageContaining("192.168.1.0/24");
  }

  @Test
  void integerAndHexFormsAreRefused() {
    assertThatThrownBy(() -> Ip.parse("3232235777")).hasMessageContaining("one number")
        .hasMessageContaining("192.168.1.1");
    assertThatThrownBy(() -> Ip.parse("0xc0.0xa8.1.1")).hasMessageContaining("192.168.1.1");
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.2.3", "1.2.3.4.5", "256.0.0.1", "10.0.0.*", "fe80::1%eth0", "::ffff:010.0.0.1",
      "10.0.0.0/255.255.255.0", "10.0.0.0/33", "/24", "*", "1.2.3.4/ 24"})
  void otherNonStandardFormsAreRefused(String text) {
    assertThatThrownBy(() -> IpRange.parse(text)).isInstanceOf(InvalidAddressException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"0.0.0.0", "10.0.0.1", "192.0.2.0/24", "255.255.255.255", "2001:db8::1",
      "2001:0db8:0000:0000:0000:0000:0000:0001", "::", "::ffff:192.0.2.1", "2001:db8::/64", "::1/128"})
  void standardFormsStillParse(String text) {
    assertThat(IpRange.parse(text)).isNotNull();
  }

  @Test
  void aPoolNamesTheTypoInsteadOfPlanningAnotherSubnet() {
    List<PoolProblem> problems = Pool.validate("p", List.of("192.168.010.0/24"), List.of("192.168.10.07"));
    assertThat(problems).extracting(PoolProblem::message).containsExactly(
        "'192.168.010.0/24' has a leading zero, which some tools read as octal (010 is 8); did you mean 192.168.10.0/24?",
        "'192.168.10.07' has a leading zero, which some tools read as octal (010 is 8); did you mean 192.168.10.7?");
  }
}
