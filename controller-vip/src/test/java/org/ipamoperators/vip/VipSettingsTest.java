package org.ipamoperators.vip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import java.time.Duration;
import java.util.Map;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.Test;

class VipSettingsTest {

  @Test
  void unsetVariablesGiveTheDefaults() {
    assertThat(VipSettings.from(Map.of())).isEqualTo(VipSettings.defaults());
    assertThat(VipSettings.defaults().handleUnclassed()).isTrue();
    assertThat(VipSettings.defaults().sweepInterval()).isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void theSweepIntervalIsAnIsoDurationOrSeconds() {
    assertThat(VipSettings.from(Map.of(VipSettings.SWEEP_INTERVAL, "PT30S")).sweepInterval()).hasSeconds(30);
    assertThat(VipSettings.from(Map.of(VipSettings.SWEEP_INTERVAL, " 90 ")).sweepInterval()).hasSeconds(90);
    assertThatThrownBy(() -> VipSettings.from(Map.of(VipSettings.SWEEP_INTERVAL, "5m")))
        .hasMessage("IPAM_VIP_SWEEP_INTERVAL: '5m' is neither an ISO-8601 duration (PT5M) nor a number of seconds");
    assertThatThrownBy(() -> VipSettings.from(Map.of(VipSettings.SWEEP_INTERVAL, "0")))
        .hasMessage("IPAM_VIP_SWEEP_INTERVAL: must be positive, was '0'");
    assertThatThrownBy(() -> VipSettings.sweepInterval("PT-1S", "--vip-sweep-interval"))
        .hasMessageStartingWith("--vip-sweep-interval: must be positive");
  }

  @Test
  void onlyFalseLeavesUnclassedServicesToAnotherLoadBalancer() {
    assertThat(VipSettings.from(Map.of(VipSettings.HANDLE_UNCLASSED, " FALSE ")).handleUnclassed()).isFalse();
    assertThat(VipSettings.from(Map.of(VipSettings.HANDLE_UNCLASSED, "true")).handleUnclassed()).isTrue();
    assertThat(VipSettings.from(Map.of(VipSettings.HANDLE_UNCLASSED, "no")).handleUnclassed()).isTrue();
  }

  @Test
  void theSettingDecidesWhichServicesAreServed() {
    Service unclassed = lb(null);
    Service ours = lb(VipAnnotations.LOAD_BALANCER_CLASS);
    Service foreign = lb("other.io/lb");
    VipSettings off = new VipSettings(false, VipSettings.DEFAULT_SWEEP_INTERVAL);
    assertThat(VipSettings.defaults().handles(unclassed)).isTrue();
    assertThat(off.handles(unclassed)).isFalse();
    assertThat(off.handles(ours)).isTrue();
    assertThat(VipSettings.defaults().handles(foreign)).isFalse();
    Service clusterIp = new ServiceBuilder(unclassed).editSpec().withType("ClusterIP").endSpec().build();
    assertThat(VipSettings.defaults().handles(clusterIp)).isFalse();
  }

  private static Service lb(String cls) {
    return new ServiceBuilder().withNewMetadata().withName("s").withNamespace("n").endMetadata().withNewSpec()
        .withType("LoadBalancer").withLoadBalancerClass(cls).endSpec().build();
  }
}
