package org.ipamoperators.keepalived;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.junit.jupiter.api.Test;

/** A KeepalivedGroup runs its image as root on the host network: the operator's settings decide what it may. */
class GroupPolicyTest {
  private static final KeepalivedSettings DEFAULTS = new KeepalivedSettings("ours/keepalived:1", "ours/ipam:1",
      Duration.ZERO);

  private static KeepalivedGroup group(String namespace, String image, Map<String, String> verbatim) {
    KeepalivedGroup g = new KeepalivedGroup();
    g.setMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName("g").build());
    g.setSpec(new KeepalivedGroupSpec(image, "eth0", null, null, null, verbatim, null, null, null, null, null, null,
        null, null, null, null, null, null, null, null));
    return g;
  }

  @Test
  void byDefaultOnlyTheOperatorsOwnImageRuns() {
    assertThat(GroupPolicy.refusal(group("a", null, null), DEFAULTS)).isEmpty();
    assertThat(GroupPolicy.refusal(group("a", "ours/keepalived:1", null), DEFAULTS)).isEmpty();
    assertThat(GroupPolicy.refusal(group("a", "quay.io/someone/keepalived:latest", null), DEFAULTS))
        .hasValueSatisfying(m -> assertThat(m).contains("quay.io/someone/keepalived:latest is not allowed")
            .contains("--keepalived-allowed-images"));
  }

  @Test
  void allowedImagesAreExactOrPrefixes() {
    KeepalivedSettings s = DEFAULTS.withAllowedImages(List.of("quay.io/redhat-cop/keepalived:*", "x/y:1"));
    assertThat(GroupPolicy.refusal(group("a", "quay.io/redhat-cop/keepalived:v2.2", null), s)).isEmpty();
    assertThat(GroupPolicy.refusal(group("a", "x/y:1", null), s)).isEmpty();
    assertThat(GroupPolicy.refusal(group("a", "x/y:2", null), s)).isPresent();
    assertThat(GroupPolicy.refusal(group("a", "quay.io/redhat-cop/keepalived-evil", null), s)).isPresent();
  }

  @Test
  void onlyTheAllowedNamespacesAreServedWhenSomeAreNamed() {
    KeepalivedSettings s = DEFAULTS.withAllowedNamespaces(Set.of("network"));
    assertThat(GroupPolicy.refusal(group("network", null, null), s)).isEmpty();
    assertThat(GroupPolicy.refusal(group("tenant-a", null, null), s))
        .hasValueSatisfying(m -> assertThat(m).contains("only in namespaces [network]").contains("tenant-a"));
  }

  @Test
  void groupLevelKeysThatRunProgramsAreRefusedLikeAServicesUnlessAllowed() {
    Map<String, String> verbatim = Map.of("notify_fifo", "/run/fifo", "vrrp_garp_master_refresh", "60",
        "vrrp_notify_fifo_script", "/bin/x");
    assertThat(GroupPolicy.refusal(group("a", null, verbatim), DEFAULTS)).hasValueSatisfying(m ->
        assertThat(m).contains("[notify_fifo, vrrp_notify_fifo_script] run programs as root"));
    assertThat(GroupPolicy.refusal(group("a", null, Map.of("vrrp_garp_master_refresh", "60")), DEFAULTS)).isEmpty();
    assertThat(GroupPolicy.refusal(group("a", null, verbatim), DEFAULTS.withAllowGroupPrograms(true))).isEmpty();
  }
}
