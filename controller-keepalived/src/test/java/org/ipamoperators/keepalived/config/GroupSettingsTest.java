package org.ipamoperators.keepalived.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.Test;

class GroupSettingsTest {

  private static GroupSettings.Builder builder() {
    return GroupSettings.builder("keepalived", "vips").interfaceName("eth0");
  }

  @Test
  void theDefaultsAreTheFastOnes() {
    GroupSettings settings = builder().build();

    assertThat(settings.vrrpVersion()).isEqualTo(3);
    assertThat(settings.advertInterval()).isEqualTo(Duration.ofMillis(100));
    assertThat(settings.priority()).isEqualTo(100);
    assertThat(settings.ownerPriority()).isEqualTo(200);
    assertThat(settings.preempt()).isTrue();
    assertThat(settings.unicast()).isFalse();
    assertThat(settings.sharedInstances()).isZero();
    assertThat(settings.toBuilder().build()).isEqualTo(settings);
  }

  @Test
  void vrrp3AdvertsAreCentisecondsUpTo4095() {
    assertThat(builder().advertInterval(Duration.ofMillis(10)).build().advertInterval()).hasMillis(10);
    assertThat(builder().advertInterval(Duration.ofMillis(40_950)).build().advertInterval()).hasMillis(40_950);
    assertThatThrownBy(() -> builder().advertInterval(Duration.ofMillis(5)).build())
        .hasMessageContaining("10 ms to 40.95 s");
    assertThatThrownBy(() -> builder().advertInterval(Duration.ofMillis(105)).build())
        .hasMessageContaining("steps of 10 ms");
    assertThatThrownBy(() -> builder().advertInterval(Duration.ofSeconds(41)).build())
        .hasMessageContaining("40.95 s");
  }

  @Test
  void vrrp2AdvertsAreWholeSeconds() {
    assertThat(builder().keepalivedDefaultTiming().build().advertInterval()).hasSeconds(1);
    assertThatThrownBy(() -> builder().vrrpVersion(2).build()).hasMessageContaining("whole seconds");
    assertThatThrownBy(() -> builder().vrrpVersion(2).advertInterval(Duration.ofMillis(1500)).build())
        .hasMessageContaining("whole seconds");
    assertThatThrownBy(() -> builder().vrrpVersion(4).build()).hasMessageContaining("2 or 3");
  }

  @Test
  void priorities() {
    assertThatThrownBy(() -> builder().priority(0).build()).hasMessageContaining("1..254");
    assertThatThrownBy(() -> builder().priority(255).build()).hasMessageContaining("1..254");
    assertThatThrownBy(() -> builder().priority(150).ownerPriority(150).build()).hasMessageContaining("above");
    assertThatThrownBy(() -> builder().ownerPriority(255).build()).hasMessageContaining("at most 254");
  }

  @Test
  void anInterfaceOrInterfaceFromIpIsNeeded() {
    assertThatThrownBy(() -> GroupSettings.builder("keepalived", "vips").build())
        .hasMessageContaining("interface or interfaceFromIP");
    assertThat(GroupSettings.builder("keepalived", "vips").interfaceFromIp(Ip.parse("192.0.2.254")).build()
        .interfaceName()).isEmpty();
    assertThatThrownBy(() -> builder().interfaceName("eth0 x").build()).hasMessageContaining("interface name");
    assertThatThrownBy(() -> builder().interfaceName("a-very-long-interface").build())
        .hasMessageContaining("interface name");
  }

  @Test
  void passwordsThatWouldBreakTheFileAreRefused() {
    assertThat(builder().password("p4ss-w0rd.long").build().password()).contains("p4ss-w0rd.long");
    for (String bad : new String[] {"", "two words", "a\"b", "a#b", "a!b", "a{b", "a}b", "a\\b", "a$b", "tab\t"}) {
      assertThatThrownBy(() -> builder().password(bad).build()).as(bad).hasMessageContaining("password");
    }
  }

  @Test
  void groupVerbatimLinesAreCheckedAndSorted() {
    GroupSettings settings = builder().verbatimConfig(Map.of("vrrp_garp_master_delay", "5", "max_auto_priority", ""))
        .build();
    assertThat(settings.verbatimConfig().keySet()).containsExactly("max_auto_priority", "vrrp_garp_master_delay");
    assertThatThrownBy(() -> builder().verbatimConfig(Map.of("router_id", "x")).build())
        .hasMessageContaining("managed by the operator");
    assertThatThrownBy(() -> builder().verbatimConfig(Map.of("vrrp_iptables", "x\n}\nvrrp_instance evil {")).build())
        .hasMessageContaining("line breaks");
  }

  @Test
  void otherLimits() {
    assertThatThrownBy(() -> builder().sharedInstances(256).build()).hasMessageContaining("0..255");
    assertThatThrownBy(() -> builder().maxAdvertisedVips(0).build()).hasMessageContaining("1..64");
    assertThatThrownBy(() -> builder().maxAdvertisedVips(90).build()).hasMessageContaining("1..64");
    assertThatThrownBy(() -> builder().preemptDelay(Duration.ofSeconds(1001)).build())
        .hasMessageContaining("preemptDelay");
    assertThatThrownBy(() -> builder().healthCheckCommand("curl").build()).hasMessageContaining("absolute path");
    assertThatThrownBy(() -> GroupSettings.builder("Keepalived", "vips").interfaceName("eth0").build())
        .hasMessageContaining("not a Kubernetes name");
  }
}
