package org.ipamoperators.egressip.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.junit.jupiter.api.Test;

/** Review H2: an API error must never turn into "no cloud" or "no network". */
class DetectionErrorTest {
  private static final String INFRA = "{\"apiVersion\":\"config.openshift.io/v1\",\"kind\":\"Infrastructure\","
      + "\"metadata\":{\"name\":\"cluster\"},\"status\":{\"platformStatus\":{\"type\":\"AWS\",\"aws\":{\"region\":\"eu-west-1\"}}}}";

  @Test
  void aFailingInfrastructureGetIsAnErrorNotBareMetal() throws Exception {
    try (FlakyApi api = new FlakyApi(); KubernetesClient client = api.client()) {
      api.answers.put("/apis/config.openshift.io/v1", FlakyApi.resources("config.openshift.io/v1", "infrastructures",
          "Infrastructure"));
      // Discovery answers, the GET of the object fails.
      api.failing.put("/apis/config.openshift.io/v1/infrastructures/cluster", 500);
      assertThatThrownBy(() -> Platform.detect(client, null)).isInstanceOf(KubernetesClientException.class)
          .hasMessageContaining("Infrastructure/cluster");
      Platform.Known known = new Platform.Known(client, null);
      assertThatThrownBy(known::current).isInstanceOf(KubernetesClientException.class);

      api.failing.clear();
      api.answers.put("/apis/config.openshift.io/v1/infrastructures/cluster", INFRA);
      assertThat(known.current().type()).isEqualTo("AWS");
      assertThat(known.current().needsCloudApi()).isTrue();
      // A transient failure keeps AWS: cleanup still detaches, a pass stays in explicit mode.
      api.failWith = 503;
      assertThat(known.current().type()).isEqualTo("AWS");
      assertThatThrownBy(() -> Platform.detect(client, null)).isInstanceOf(KubernetesClientException.class);
    }
  }

  @Test
  void aFailingDiscoveryIsAnErrorNotNone() throws Exception {
    try (FlakyApi api = new FlakyApi(); KubernetesClient client = api.client()) {
      api.failWith = 500;
      NetworkDetector detector = new NetworkDetector(client);
      assertThatThrownBy(detector::detect).isInstanceOf(KubernetesClientException.class);
      api.failWith = 0;
      api.answers.put("/apis/network.openshift.io/v1", FlakyApi.resources("network.openshift.io/v1", "hostsubnets",
          "HostSubnet"));
      assertThat(detector.detect()).isEqualTo(NetworkType.OPENSHIFT_SDN);
      api.failWith = 500;
      assertThat(detector.detect()).isEqualTo(NetworkType.OPENSHIFT_SDN);
      api.failWith = 0;
      api.answers.clear(); // neither API served, answered properly: that is NONE
      assertThat(detector.detect()).isEqualTo(NetworkType.NONE);
    }
  }
}
