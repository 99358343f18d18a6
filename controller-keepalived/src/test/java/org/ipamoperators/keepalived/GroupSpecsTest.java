package org.ipamoperators.keepalived;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.ipamoperators.keepalived.config.GroupSettings;
import org.junit.jupiter.api.Test;

class GroupSpecsTest {
  private static KeepalivedGroup group(KeepalivedGroupSpec spec) {
    KeepalivedGroup g = new KeepalivedGroup();
    g.setMetadata(new ObjectMetaBuilder().withNamespace("kg").withName("g1").build());
    g.setSpec(spec);
    return g;
  }

  private static KeepalivedGroupSpec spec(String iface, String fromIp, Integer version, String advert, Integer priority,
      Integer ownerPriority, List<Integer> blacklist) {
    return new KeepalivedGroupSpec(null, iface, fromIp, null, null, Map.of("vrrp_garp_master_delay", "1"), blacklist,
        true, null, null, version, advert, priority, ownerPriority, false, "30s", 4, 8, null, null);
  }

  @Test
  void theOldFieldsAndTheNewSettingsReachTheRenderer() {
    GroupSettings s = GroupSpecs.settings(group(spec("ens3", null, null, "250ms", 150, 220, List.of(1, 2))),
        Optional.of("pw"));
    assertThat(s.key()).isEqualTo("kg/g1");
    assertThat(s.interfaceName()).hasValue("ens3");
    assertThat(s.unicast()).isTrue();
    assertThat(s.password()).hasValue("pw");
    assertThat(s.verbatimConfig()).containsEntry("vrrp_garp_master_delay", "1");
    assertThat(s.advertInterval()).isEqualTo(Duration.ofMillis(250));
    assertThat(s.priority()).isEqualTo(150);
    assertThat(s.ownerPriority()).isEqualTo(220);
    assertThat(s.preempt()).isFalse();
    assertThat(s.preemptDelay()).isEqualTo(Duration.ofSeconds(30));
    assertThat(s.sharedInstances()).isEqualTo(4);
    assertThat(s.maxAdvertisedVips()).isEqualTo(8);
  }

  @Test
  void defaultsAndVrrp2() {
    GroupSettings fast = GroupSpecs.settings(group(spec("eth0", null, null, null, null, null, null)), Optional.empty());
    assertThat(fast.vrrpVersion()).isEqualTo(3);
    assertThat(fast.advertInterval()).isEqualTo(GroupSettings.DEFAULT_ADVERT_INTERVAL);
    // VRRPv2 without an interval: keepalived's one second, not the sub-second default it cannot do.
    GroupSettings v2 = GroupSpecs.settings(group(spec("eth0", null, 2, null, null, null, null)), Optional.empty());
    assertThat(v2.advertInterval()).isEqualTo(Duration.ofSeconds(1));
    GroupSettings fromIp = GroupSpecs.settings(group(spec(null, "192.0.2.1", null, null, null, null, null)),
        Optional.empty());
    assertThat(fromIp.interfaceFromIp()).isPresent();
  }

  @Test
  void badValuesAreClearErrors() {
    assertThatThrownBy(() -> GroupSpecs.settings(group(spec("eth0", null, 2, "100ms", null, null, null)),
        Optional.empty())).hasMessageContaining("whole seconds");
    assertThatThrownBy(() -> GroupSpecs.settings(group(spec("eth0", null, null, null, 250, 200, null)),
        Optional.empty())).hasMessageContaining("ownerPriority");
    assertThatThrownBy(() -> GroupSpecs.settings(group(spec(null, "not-an-ip", null, null, null, null, null)),
        Optional.empty())).hasMessageContaining("interfaceFromIP");
    assertThatThrownBy(() -> GroupSpecs.duration("10 minutes", "advertInterval"))
        .hasMessageContaining("advertInterval");
    assertThat(GroupSpecs.duration("0.1s", "x")).isEqualTo(Duration.ofMillis(100));
    assertThat(GroupSpecs.duration("1500ms", "x")).isEqualTo(Duration.ofMillis(1500));
  }
}
