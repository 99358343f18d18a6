package org.ipamoperators.cloud.aws;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ProviderIdTest {
  @Test
  void theInstanceIdIsTheLastSegmentOfAnAwsProviderId() {
    assertThat(ProviderId.instanceId("aws:///us-east-1a/i-0abc123")).hasValue("i-0abc123");
    assertThat(ProviderId.instanceId("aws://us-east-1a/i-0abc123")).hasValue("i-0abc123");
    assertThat(ProviderId.instanceId("aws:///us-east-1a/")).isEmpty();
    assertThat(ProviderId.instanceId("azure:///subscriptions/x/vm-1")).isEmpty();
    assertThat(ProviderId.instanceId(null)).isEmpty();
  }

  @Test
  void staticKeysNeverPrintAndNeedBothHalves() {
    AwsSettings s = AwsSettings.of("us-east-1").withKeys(new AwsSettings.StaticKeys("AKIDEXAMPLE", "s3cr3t"));
    assertThat(s.toString()).doesNotContain("AKIDEXAMPLE", "s3cr3t").contains("redacted");
    assertThatThrownBy(() -> new AwsSettings.StaticKeys("AKIDEXAMPLE", " ")).hasMessageNotContaining("AKIDEXAMPLE");
    assertThatThrownBy(() -> AwsSettings.of(" ")).hasMessageContaining("region");
  }
}
