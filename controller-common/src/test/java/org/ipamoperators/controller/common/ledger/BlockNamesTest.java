package org.ipamoperators.controller.common.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.Map;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.Test;

class BlockNamesTest {
  private static final String DNS1123 = "[a-z0-9]([-a-z0-9.]*[a-z0-9])?";

  @Test
  void ipv4BlocksAreAligned26s() {
    assertThat(BlockNames.of(Ip.parse("192.0.2.64"))).isEqualTo("192.0.2.64-26");
    assertThat(BlockNames.of(Ip.parse("192.0.2.127"))).isEqualTo("192.0.2.64-26");
    assertThat(BlockNames.of(Ip.parse("192.0.2.128"))).isEqualTo("192.0.2.128-26");
    assertThat(BlockNames.of(Ip.parse("0.0.0.63"))).isEqualTo("0.0.0.0-26");
    assertThat(BlockNames.of(Ip.parse("255.255.255.255"))).isEqualTo("255.255.255.192-26");
    assertThat(BlockNames.cidr(Ip.parse("198.51.100.200"))).isEqualTo("198.51.100.192/26");
  }

  @Test
  void ipv6BlocksAreAligned122sWithDnsSafeNames() {
    String name = BlockNames.of(Ip.parse("2001:db8::7f"));
    assertThat(name).isEqualTo("2001-0db8-0000-0000-0000-0000-0000-0040-122");
    assertThat(name).matches(DNS1123).hasSizeLessThanOrEqualTo(253);
    assertThat(BlockNames.of(Ip.parse("2001:db8::40"))).isEqualTo(name);
    assertThat(BlockNames.of(Ip.parse("2001:db8::80"))).isEqualTo("2001-0db8-0000-0000-0000-0000-0000-0080-122");
    assertThat(BlockNames.of(Ip.parse("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")))
        .isEqualTo("ffff-ffff-ffff-ffff-ffff-ffff-ffff-ffc0-122").matches(DNS1123);
    assertThat(BlockNames.cidr(Ip.parse("2001:db8::1"))).isEqualTo("2001:db8::/122");
  }

  @Test
  void everyAddressOfABlockMapsToItAndNoOther() {
    Ip base = Ip.parse("203.0.113.0");
    Ip ip = base;
    for (int i = 0; i < 256; i++) {
      assertThat(BlockNames.of(ip)).isEqualTo("203.0.113." + (i / 64 * 64) + "-26");
      ip = ip.next();
    }
  }

  @Test
  void blockSerializesEntriesByAddressAndReadsBack() {
    ClaimOwner owner = new ClaimOwner("egressip", "Namespace", null, "payments", null);
    IPBlock b = IPBlock.of("192.0.2.64-26", "192.0.2.64/26",
        Map.of("192.0.2.65", new IPBlockEntry("egressipam/bm", owner, "allocated", "2026-11-26T07:00:00Z")));
    String json = Serialization.asJson(b);
    assertThat(json).contains("\"kind\":\"IPBlock\"", "\"apiVersion\":\"ipam.ipamoperators.org/v1alpha1\"",
        "\"entries\":{\"192.0.2.65\":{", "\"controller\":\"egressip\"", "\"origin\":\"allocated\"")
        .doesNotContain("\"namespace\":null", "\"uid\"");
    IPBlock back = Serialization.unmarshal(json, IPBlock.class);
    assertThat(back.entries()).containsEntry("192.0.2.65",
        new IPBlockEntry("egressipam/bm", owner, "allocated", "2026-11-26T07:00:00Z"));
    assertThat(back.getSpec().cidr()).isEqualTo("192.0.2.64/26");
    assertThat(new IPBlock().entries()).isEmpty();
  }
}
