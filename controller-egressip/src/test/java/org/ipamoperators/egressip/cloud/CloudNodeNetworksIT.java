package org.ipamoperators.egressip.cloud;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import org.ipamoperators.cloud.aws.AwsSettings;
import org.ipamoperators.cloud.aws.Ec2NodeNetwork;
import org.ipamoperators.cloud.baremetal.BareMetalNodeNetwork;
import org.ipamoperators.egressip.network.Platform;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Which network, region and credentials the operator uses, against a real API server. */
@KubeApiTest
class CloudNodeNetworksIT {
  private static final String NS = "cloud-credentials-it";
  private KubernetesClient client;

  @BeforeEach
  void setUp(KubernetesClient client) {
    this.client = client;
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .serverSideApply();
  }

  @AfterEach
  void tearDown() {
    client.secrets().inNamespace(NS).withName(CloudSettings.CREDENTIALS_SECRET).delete();
  }

  private void secret(String id, String key) {
    SecretBuilder b = new SecretBuilder().withNewMetadata().withName(CloudSettings.CREDENTIALS_SECRET).endMetadata();
    if (id != null) {
      b.addToStringData("aws_access_key_id", id);
    }
    if (key != null) {
      b.addToStringData("aws_secret_access_key", key);
    }
    client.secrets().inNamespace(NS).withName(CloudSettings.CREDENTIALS_SECRET).withTimeoutInMillis(10_000)
        .delete();
    client.secrets().inNamespace(NS).resource(b.build()).create();
  }

  @Test
  void theOldSecretGivesStaticKeysAndWithoutItTheDefaultChainApplies() {
    CloudNodeNetworks networks = new CloudNodeNetworks(client, new CloudSettings(null, null, NS));
    Platform aws = new Platform("AWS", true, "eu-west-1");

    assertThat(networks.awsSettings(aws).keys()).isNull(); // no Secret: default chain
    secret("AKIDEXAMPLE", "not-a-real-secret");
    AwsSettings s = networks.awsSettings(aws);
    assertThat(s.region()).isEqualTo("eu-west-1");
    assertThat(s.keys().accessKeyId()).isEqualTo("AKIDEXAMPLE");
    assertThat(s.keys().secretAccessKey()).isEqualTo("not-a-real-secret");
    assertThat(s.toString()).doesNotContain("AKIDEXAMPLE", "not-a-real-secret");

    secret("AKIDEXAMPLE", null);
    assertThatThrownBy(() -> networks.awsSettings(aws)).hasMessageContaining("needs both")
        .hasMessageNotContaining("AKIDEXAMPLE");
  }

  @Test
  void theRegionSettingWinsAndNoRegionAtAllIsReportedWithTheBareMetalFallback() {
    Platform awsNoRegion = new Platform("AWS", true, null);
    CloudNodeNetworks withSetting = new CloudNodeNetworks(client,
        new CloudSettings("us-west-2", URI.create("http://127.0.0.1:1"), NS));
    assertThat(withSetting.awsSettings(new Platform("AWS", true, "eu-west-1")).region()).isEqualTo("us-west-2");

    CloudNodeNetworks without = new CloudNodeNetworks(client, new CloudSettings(null, null, NS));
    NodeNetworks.Selection s = without.select(awsNoRegion);
    assertThat(s.network()).isInstanceOf(BareMetalNodeNetwork.class);
    assertThat(s.problem()).contains("no AWS region", "IPAM_AWS_REGION");
    assertThat(without.select(new Platform("None", false, null)).problem()).isNull();
  }

  @Test
  void theEc2NetworkIsKeptWhileItsSettingsStayAndRebuiltWhenTheKeysChange() {
    CloudNodeNetworks networks = new CloudNodeNetworks(client,
        new CloudSettings(null, URI.create("http://127.0.0.1:1"), NS));
    Platform aws = new Platform("AWS", true, "us-east-1");
    secret("AKIDONE", "secret-one");
    var first = networks.select(aws).network();
    assertThat(first).isInstanceOf(Ec2NodeNetwork.class);
    assertThat(networks.select(aws).network()).isSameAs(first);
    secret("AKIDTWO", "secret-two");
    assertThat(networks.select(aws).network()).isNotSameAs(first).isInstanceOf(Ec2NodeNetwork.class);
  }
}
