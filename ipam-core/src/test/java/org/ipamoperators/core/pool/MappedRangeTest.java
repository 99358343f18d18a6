package org.ipamoperators.core.pool;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The bad-input corpus's finding: an IPv4-mapped IPv6 range was a valid pool of unroutable addresses. */
class MappedRangeTest {
  @Test
  void anIpv4MappedRangeIsRefusedWithTheReason() {
    assertThat(Pool.validate("p", List.of("::ffff:203.0.113.0/120"), List.of()))
        .singleElement().satisfies(p -> assertThat(p.message()).contains("IPv4-mapped"));
    assertThat(Pool.validate("p", List.of("::ffff:192.0.2.1-::ffff:192.0.2.9"), List.of())).isNotEmpty();
  }

  @Test
  void ordinaryIpv6AndIpv4RangesStayValid() {
    assertThat(Pool.validate("p", List.of("2001:db8::/120", "203.0.113.0/24", "::fffe:0:0/96"), List.of())).isEmpty();
  }
}
