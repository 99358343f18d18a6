package org.ipamoperators.controller.common.kube;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The admission patterns (plain regular expressions, read the same by Go's RE2 and by Java). */
class AddressPatternsTest {

  @ParameterizedTest
  @ValueSource(strings = {"192.168.10.0/24", "0.0.0.0/0", "10.0.0.5/24", "255.255.255.255/32", "2001:db8::/64",
      "::/0", "2001:0db8::/128"})
  void cidrsInStandardFormPass(String text) {
    assertThat(text).matches(AddressPatterns.CIDR).matches(AddressPatterns.ADDRESS_CIDR_OR_RANGE);
  }

  @ParameterizedTest
  @ValueSource(strings = {"192.168.010.0/24", "010.0.0.0/8", "10.0.0.0/08", "192.168.1/24", "10.1/16",
      "3232235777/32", "256.0.0.0/8", "10.0.0.0/33", "10.0.0.1", "2001:db8::/129"})
  void lenientOrWrongCidrsAreRefused(String text) {
    assertThat(text).doesNotMatch(AddressPatterns.CIDR);
  }

  @ParameterizedTest
  @ValueSource(strings = {"10.0.0.7", " 10.0.0.7 ", "10.0.0.5-10.0.0.9", "10.0.0.5 - 10.0.0.9", "2001:db8::1",
      "2001:db8::1-2001:db8::9", "2001:db8::/120"})
  void entriesInStandardFormPass(String text) {
    assertThat(text).matches(AddressPatterns.ADDRESS_CIDR_OR_RANGE);
  }

  @ParameterizedTest
  @ValueSource(strings = {"10.0.0.07", "10.1", "3232235777", "10.0.0.1-10.0.0.010", "0x0a.0.0.1", "banana", ""})
  void lenientEntriesAreRefused(String text) {
    assertThat(text).doesNotMatch(AddressPatterns.ADDRESS_CIDR_OR_RANGE);
  }
}
