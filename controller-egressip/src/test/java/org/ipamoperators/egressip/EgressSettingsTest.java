package org.ipamoperators.egressip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.ipamoperators.egressip.cloud.CloudSettings;
import org.ipamoperators.egressip.plan.Orphans;
import org.junit.jupiter.api.Test;

class EgressSettingsTest {
  private static final CloudSettings CLOUD = new CloudSettings(Map.of(), null, null);

  @Test
  void unsetVariablesGiveTheDefaults() {
    EgressSettings s = EgressSettings.from(Map.of(), CLOUD);
    assertThat(s).isEqualTo(EgressSettings.defaults());
    assertThat(s.platform()).isNull();
    assertThat(s.writers()).isEqualTo(8);
    assertThat(s.fullPlanEvery()).isEqualTo(Duration.ofMinutes(5));
    assertThat(s.incremental()).isTrue();
    assertThat(s.orphanGrace()).isEqualTo(Orphans.Grace.DEFAULT);
  }

  @Test
  void theVariablesSetEachSetting() {
    EgressSettings s = EgressSettings.from(Map.of(EgressSettings.PLATFORM, " AWS ", EgressSettings.WRITERS, "2",
        EgressSettings.FULL_PLAN_SECONDS, "60", EgressSettings.INCREMENTAL, "false",
        EgressSettings.ORPHAN_GRACE_SECONDS, "5", EgressSettings.ORPHAN_GRACE_PASSES, "4"), CLOUD);
    assertThat(s).isEqualTo(new EgressSettings("AWS", 2, Duration.ofSeconds(60), false,
        new Orphans.Grace(Duration.ofSeconds(5), 4), CLOUD));
  }

  @Test
  void aBadValueNamesItsVariable() {
    assertThatThrownBy(() -> EgressSettings.from(Map.of(EgressSettings.WRITERS, "many"), CLOUD))
        .hasMessage("IPAM_EGRESSIP_WRITERS 'many' is not a whole number");
    assertThatThrownBy(() -> EgressSettings.from(Map.of(EgressSettings.WRITERS, "0"), CLOUD))
        .hasMessage("IPAM_EGRESSIP_WRITERS must be 1 or more, was 0");
    assertThatThrownBy(() -> EgressSettings.from(Map.of(EgressSettings.FULL_PLAN_SECONDS, "0"), CLOUD))
        .hasMessageStartingWith("IPAM_EGRESSIP_FULL_PLAN_SECONDS must be 1 or more");
  }

  @Test
  void overridesWinOverTheEnvironmentForProviderSettings() {
    var region = new org.ipamoperators.core.spi.ProviderSetting("aws.region", "the region");
    assertThat(new CloudSettings(Map.of("aws.region", "eu-west-1"), null, null).value(region)).isEqualTo("eu-west-1");
    assertThat(new CloudSettings(Map.of(), " ", " ").provider()).isNull();
  }
}
