package org.ipamoperators.vip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.junit.jupiter.api.Test;

/** Groups parsed once per definition, per owner, and never more than a bounded number of them. */
class GroupPoolsTest {
  private static GroupInfo group(String name, String segment) {
    return new GroupInfo(name, new IPGroupSpec(segment, List.of(), null, null, null, null, null, null));
  }

  @Test
  void aDefinitionIsParsedOnceAndAnEditIsParsedAgain() {
    GroupPools pools = new GroupPools();
    GroupPools.Parsed first = pools.parse(group("a", "192.0.2.0/28"));
    assertThat(first.pool()).isNotNull();
    assertThat(pools.parse(group("a", "192.0.2.0/28"))).isSameAs(first);
    assertThat(new GroupPools().parse(group("a", "192.0.2.0/28"))).as("another owner's memo").isNotSameAs(first);
    GroupPools.Parsed edited = pools.parse(group("a", "192.0.2.0/29"));
    assertThat(edited).isNotSameAs(first);
    assertThat(edited.pool().capacity(org.ipamoperators.core.address.IpFamily.IPV4))
        .isLessThan(first.pool().capacity(org.ipamoperators.core.address.IpFamily.IPV4));
    assertThat(pools.parse(group("bad", "not-a-cidr")).problems()).isNotBlank();
  }

  @Test
  void staysBoundedAsGroupsComeAndGo() {
    GroupPools pools = new GroupPools();
    for (int i = 0; i < 3000; i++) {
      pools.parse(group("g" + i, "192.0.2.0/30"));
    }
    assertThat(pools.size()).isBetween(1, 1024);
  }
}
