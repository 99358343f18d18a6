package org.ipamoperators.egressip.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.ipamoperators.egressip.network.NetworkType.NONE;
import static org.ipamoperators.egressip.network.NetworkType.OPENSHIFT_SDN;
import static org.ipamoperators.egressip.network.NetworkType.OVN_KUBERNETES;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.junit.jupiter.api.Test;

/** Who attaches egress addresses to cloud interfaces: us, OpenShift (OVN + CNCC), nobody needed, nobody able. */
class CloudAttachmentTest {
  private static final String CNCC_VALUE =
      "[{\"interface\":\"eni-0ea5a39d571358a91\",\"ifaddr\":{\"ipv4\":\"10.0.128.0/18\"},\"capacity\":{\"ipv4\":14,\"ipv6\":15}}]";

  @Test
  void onOvnWithOpenShiftAttachingThisControllerAttachesNothing() {
    CloudAttachment a = CloudAttachment.decide(true, true, OVN_KUBERNETES, true);
    assertThat(a).isEqualTo(CloudAttachment.OPENSHIFT);
    assertThat(a.byThisController()).isFalse();
    assertThat(a.statusNote()).contains("left to OpenShift").contains(EgressAnnotations.CLOUD_EGRESS_IPCONFIG);
    // OpenShift attaches whether or not our module could: no "module missing" failure either
    assertThat(CloudAttachment.decide(true, false, OVN_KUBERNETES, true)).isEqualTo(CloudAttachment.OPENSHIFT);
  }

  @Test
  void onACloudWithoutOpenShiftAttachingThisControllerAttachesAsBefore() {
    assertThat(CloudAttachment.decide(true, true, OVN_KUBERNETES, false)).isEqualTo(CloudAttachment.THIS_CONTROLLER);
    assertThat(CloudAttachment.decide(true, true, OPENSHIFT_SDN, false)).isEqualTo(CloudAttachment.THIS_CONTROLLER);
    // SDN: CNCC's annotation does not make OpenShift attach SDN's egress IPs for us
    assertThat(CloudAttachment.decide(true, true, OPENSHIFT_SDN, true)).isEqualTo(CloudAttachment.THIS_CONTROLLER);
    assertThat(CloudAttachment.decide(true, true, NONE, true)).isEqualTo(CloudAttachment.THIS_CONTROLLER);
    assertThat(CloudAttachment.THIS_CONTROLLER.byThisController()).isTrue();
    assertThat(CloudAttachment.THIS_CONTROLLER.statusNote()).isNull();
  }

  @Test
  void bareMetalNeedsNoAttachmentAndACloudWithoutModuleHasNobody() {
    assertThat(CloudAttachment.decide(false, false, OVN_KUBERNETES, true)).isEqualTo(CloudAttachment.NOT_NEEDED);
    assertThat(CloudAttachment.decide(false, false, OPENSHIFT_SDN, false)).isEqualTo(CloudAttachment.NOT_NEEDED);
    assertThat(CloudAttachment.decide(true, false, OPENSHIFT_SDN, false)).isEqualTo(CloudAttachment.MISSING_MODULE);
    assertThat(CloudAttachment.decide(true, false, OVN_KUBERNETES, false)).isEqualTo(CloudAttachment.MISSING_MODULE);
    assertThat(CloudAttachment.NOT_NEEDED.byThisController()).isFalse();
    assertThat(CloudAttachment.MISSING_MODULE.byThisController()).isFalse();
    // a module given explicitly (tests, a fixed network) attaches even where the platform reads as None
    assertThat(CloudAttachment.decide(false, true, OPENSHIFT_SDN, false)).isEqualTo(CloudAttachment.THIS_CONTROLLER);
    assertThat(CloudAttachment.decide(false, true, OVN_KUBERNETES, true)).isEqualTo(CloudAttachment.OPENSHIFT);
  }

  @Test
  void anyAnnotatedNodeOfTheClusterShowsOpenShiftAttaches() {
    List<Map<String, String>> nodes = new ArrayList<>(Arrays.asList(null, Map.of("other", "x"),
        Map.of(EgressAnnotations.CLOUD_EGRESS_IPCONFIG, " ")));
    assertThat(CloudAttachment.openShiftAttaches(nodes)).as("absent or blank everywhere").isFalse();
    assertThat(CloudAttachment.openShiftAttaches(List.of())).isFalse();
    nodes.add(Map.of(EgressAnnotations.CLOUD_EGRESS_IPCONFIG, CNCC_VALUE));
    assertThat(CloudAttachment.openShiftAttaches(nodes)).as("one node carries it").isTrue();
  }
}
