package org.ipamoperators.egressip.cloud;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import org.ipamoperators.cloud.aws.Ec2NodeNetwork;
import org.ipamoperators.cloud.aws.Ec2NodeNetworkProvider;
import org.ipamoperators.egressip.network.Platform;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Secrets providers read and the network kept or rebuilt, against a real API server. */
@KubeApiTest
class CloudNodeNetworksIT {
  private static final String NS = "cloud-credentials-it";
  private static final String SECRET = Ec2NodeNetworkProvider.CREDENTIALS_SECRET;
  private KubernetesClient client;

  @BeforeEach
  void setUp(KubernetesClient client) {
    this.client = client;
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .serverSideApply();
  }

  @AfterEach
  void tearDown() {
    client.secrets().inNamespace(NS).withName(SECRET).delete();
  }

  private void secret(String id, String key) {
    SecretBuilder b = new SecretBuilder().withNewMetadata().withName(SECRET).endMetadata();
    if (id != null) {
      b.addToStringData("aws_access_key_id", id);
    }
    if (key != null) {
      b.addToStringData("aws_secret_access_key", key);
    }
    client.secrets().inNamespace(NS).withName(SECRET).withTimeoutInMillis(10_000)
        .delete();
    client.secrets().inNamespace(NS).resource(b.build()).create();
  }

  @Test
  void theSecretsAProviderAsksForAreReadFromTheOperatorsNamespace() {
    CloudNodeNetworks.SecretReader read = CloudNodeNetworks.clusterSecrets(client, new CloudSettings(Map.of(), NS, null));
    assertThat(read.read(SECRET)).isEmpty(); // absent: the provider's defaults apply

    secret("AKIDEXAMPLE", "not-a-real-secret");
    assertThat(read.read(SECRET)).containsEntry("aws_access_key_id", "AKIDEXAMPLE")
        .containsEntry("aws_secret_access_key", "not-a-real-secret");

    CloudNodeNetworks networks = new CloudNodeNetworks(client, new CloudSettings(Map.of(), NS, null));
    NodeNetworks.Selection s = networks.select(new Platform("AWS", true, null));
    assertThat(s.problem()).contains("no AWS region", "IPAM_AWS_REGION").doesNotContain("not-a-real-secret");
    assertThat(networks.select(new Platform("None", false, null)).problem()).isNull();
  }

  @Test
  void theEc2NetworkIsKeptWhileItsSettingsStayAndRebuiltWhenTheKeysChange() {
    CloudNodeNetworks networks = new CloudNodeNetworks(client,
        new CloudSettings(Map.of("aws.endpoint", "http://127.0.0.1:1"), NS, null));
    Platform aws = new Platform("AWS", true, "us-east-1");
    secret("AKIDONE", "secret-one");
    var first = networks.select(aws).network();
    assertThat(first).isInstanceOf(Ec2NodeNetwork.class);
    assertThat(networks.select(aws).network()).isSameAs(first);
    secret("AKIDTWO", "secret-two");
    assertThat(networks.select(aws).network()).isNotSameAs(first).isInstanceOf(Ec2NodeNetwork.class);
    networks.close();
  }
}
