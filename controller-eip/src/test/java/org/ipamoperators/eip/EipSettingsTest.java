package org.ipamoperators.eip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class EipSettingsTest {
  @Test
  void theOldOperatorsVariablesAndTheDefaults() {
    EipSettings s = EipSettings.from(Map.of("CLUSTER_NAME", "prod", "AWS_REGION", "us-east-1",
        "DEFAULT_TAGS", "{\"Stack\":\"mzcloud/test\"}", "NAMESPACE", "web"));
    assertThat(s.clusterName()).isEqualTo("prod");
    assertThat(s.namespace()).isEqualTo("web");
    assertThat(s.defaultTags()).containsExactlyEntriesOf(Map.of("Stack", "mzcloud/test"));
    assertThat(s.resyncInterval()).isEqualTo(Duration.ofMinutes(2));
    assertThat(EipSettings.from(Map.of("CLUSTER_NAME", "p", "AWS_REGION", "r", "EIP_RESYNC_INTERVAL", "45s"))
        .resyncInterval()).isEqualTo(Duration.ofSeconds(45));
  }

  /** As k8s-eip-operator (the SDK's default chain): here its first link, the aws.region property. */
  @Test
  void withoutARegionVariableTheSdksDefaultRegionChainGivesTheRegion() {
    String before = System.getProperty("aws.region");
    System.setProperty("aws.region", "eu-west-3");
    try {
      assertThat(EipSettings.from(Map.of("CLUSTER_NAME", "p")).aws().region()).isEqualTo("eu-west-3");
      assertThat(EipSettings.from(Map.of("CLUSTER_NAME", "p", "AWS_DEFAULT_REGION", "us-west-2")).aws().region())
          .as("a variable given wins").isEqualTo("us-west-2");
    } finally {
      if (before == null) {
        System.clearProperty("aws.region");
      } else {
        System.setProperty("aws.region", before);
      }
    }
  }

  @Test
  void badSettingsFailTheStartWithTheVariableNamed() {
    assertThatThrownBy(() -> EipSettings.from(Map.of("AWS_REGION", "r"))).hasMessageStartingWith("CLUSTER_NAME");
    assertThatThrownBy(() -> EipSettings.from(Map.of("CLUSTER_NAME", "p"), n -> n, Optional::empty))
        .hasMessageStartingWith("AWS_REGION is not set and the AWS SDK's default region chain");
    assertThatThrownBy(() -> EipSettings.from(Map.of("CLUSTER_NAME", "p", "AWS_REGION", "r",
        "DEFAULT_TAGS", "{not json"))).hasMessageStartingWith("DEFAULT_TAGS is not a JSON object");
    assertThatThrownBy(() -> EipSettings.from(Map.of("CLUSTER_NAME", "p", "AWS_REGION", "r",
        "DEFAULT_TAGS", "{\"eip.materialize.cloud/eip_uid\":\"x\"}")))
        .hasMessageContaining("DEFAULT_TAGS may not set the tag eip.materialize.cloud/eip_uid");
    assertThatThrownBy(() -> EipSettings.from(Map.of("CLUSTER_NAME", "p", "AWS_REGION", "r",
        "EIP_RESYNC_INTERVAL", "soon"))).hasMessageStartingWith("EIP_RESYNC_INTERVAL 'soon' is not a duration");
    assertThatThrownBy(() -> EipSettings.from(Map.of("CLUSTER_NAME", "p", "AWS_REGION", "r",
        "DEFAULT_TAGS", "[1]"), n -> "--x (env " + n + ")"))
        .hasMessageStartingWith("--x (env DEFAULT_TAGS) is not a JSON object");
  }

  @Test
  void nodeModeLimitsDefaultToNoneAndAreReadFromTheirVariables() {
    EipSettings open = EipSettings.from(Map.of("CLUSTER_NAME", "p", "AWS_REGION", "r"));
    assertThat(open.nodeMode().allows("anything")).isTrue();
    assertThat(open.nodeMode().nodes().any()).isTrue();
    EipSettings strict = EipSettings.from(Map.of("CLUSTER_NAME", "p", "AWS_REGION", "r",
        "EIP_NODE_MODE_NAMESPACES", " egress-gw, ,edge ", "EIP_NODE_MODE_NODE_SELECTOR", "tier=edge"));
    assertThat(strict.nodeMode().namespaces()).containsExactlyInAnyOrder("egress-gw", "edge");
    assertThat(strict.nodeMode().allows("team-b")).isFalse();
    assertThat(strict.nodeMode().nodes().admits(Map.of("tier", "edge"))).isTrue();
    assertThat(strict.nodeMode().nodes().admits(Map.of("tier", "web"))).isFalse();
    assertThat(strict.withIntervals(Duration.ofSeconds(1), Duration.ofSeconds(1)).nodeMode())
        .isEqualTo(strict.nodeMode());
    assertThatThrownBy(() -> EipSettings.from(Map.of("CLUSTER_NAME", "p", "AWS_REGION", "r",
        "EIP_NODE_MODE_NODE_SELECTOR", "tier>1"), n -> "--x (env " + n + ")"))
        .hasMessageStartingWith("--x (env EIP_NODE_MODE_NODE_SELECTOR) 'tier>1' is not a label selector term");
    assertThatThrownBy(() -> EipSettings.from(Map.of("CLUSTER_NAME", "p", "AWS_REGION", "r",
        "EIP_NODE_MODE_NAMESPACES", "Team_B"))).hasMessageStartingWith("EIP_NODE_MODE_NAMESPACES 'Team_B'");
  }

  @Test
  void theBranchEniIsTheFirstEniIdOfThePodEniAnnotation() {
    assertThat(EipReads.branchEni("[{\"eniId\":\"eni-0abc\",\"ifAddress\":\"x\"}]")).contains("eni-0abc");
    assertThat(EipReads.branchEni("{not json")).isEmpty();
    assertThat(EipReads.branchEni("[]")).isEmpty();
  }
}
