package org.ipamoperators.cloud.aws;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.ProviderContext;
import org.junit.jupiter.api.Test;

/** Region, endpoint and keys from the context the controller gives. */
class Ec2NodeNetworkProviderTest {
  private static final String SECRET = Ec2NodeNetworkProvider.CREDENTIALS_SECRET;

  private static ProviderContext context(Map<String, String> attributes, Map<String, String> settings,
      Map<String, String> secret) {
    return new ProviderContext("AWS", attributes, settings, secret == null ? Map.of() : Map.of(SECRET, secret));
  }

  @Test
  void theRegionSettingWinsOverThePlatformsAndWithoutEitherTheErrorSaysWhatToSet() throws Exception {
    assertThat(Ec2NodeNetworkProvider.settings(context(Map.of("region", "eu-west-1"), Map.of(), null)).region())
        .isEqualTo("eu-west-1");
    assertThat(Ec2NodeNetworkProvider.settings(context(Map.of("region", "eu-west-1"),
        Map.of("aws.region", "us-west-2"), null)).region()).isEqualTo("us-west-2");
    assertThatThrownBy(() -> Ec2NodeNetworkProvider.settings(context(Map.of(), Map.of(), null)))
        .isInstanceOf(NodeNetworkException.class).hasMessageContaining("no AWS region")
        .hasMessageContaining("IPAM_AWS_REGION");
  }

  @Test
  void theOldSecretGivesStaticKeysWithoutItTheDefaultChainAndHalfAPairIsRefusedUnprinted() throws Exception {
    Map<String, String> region = Map.of("region", "eu-west-1");
    assertThat(Ec2NodeNetworkProvider.settings(context(region, Map.of(), null)).keys()).isNull();
    AwsSettings s = Ec2NodeNetworkProvider.settings(context(region, Map.of(),
        Map.of("aws_access_key_id", " AKIDEXAMPLE\n", "aws_secret_access_key", "not-a-real-secret")));
    assertThat(s.keys().accessKeyId()).isEqualTo("AKIDEXAMPLE");
    assertThat(s.keys().secretAccessKey()).isEqualTo("not-a-real-secret");
    assertThat(s.toString()).doesNotContain("AKIDEXAMPLE", "not-a-real-secret");

    ProviderContext half = context(region, Map.of(), Map.of("aws_access_key_id", "AKIDEXAMPLE"));
    assertThatThrownBy(() -> Ec2NodeNetworkProvider.settings(half)).hasMessageContaining("needs both")
        .hasMessageNotContaining("AKIDEXAMPLE");
    assertThat(half.toString()).doesNotContain("AKIDEXAMPLE").contains(SECRET);
  }

  @Test
  void theEndpointSettingReachesTheClient() throws Exception {
    AwsSettings s = Ec2NodeNetworkProvider.settings(context(Map.of("region", "us-east-1"),
        Map.of("aws.endpoint", "http://127.0.0.1:5000"), null));
    assertThat(s.endpoint()).hasToString("http://127.0.0.1:5000");
  }
}
