package org.ipamoperators.keepalived;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import java.time.Duration;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.junit.jupiter.api.Test;

/** The group's DaemonSet as rendered: the metrics listener of its host-network pods is bound to the pod's address. */
class GroupObjectsTest {
  private static final KeepalivedSettings SETTINGS = new KeepalivedSettings("k/keepalived:1", "k/ipam:1",
      Duration.ZERO);

  private static KeepalivedGroup group() {
    KeepalivedGroup g = new KeepalivedGroup();
    g.setMetadata(new ObjectMetaBuilder().withNamespace("net").withName("g").withUid("u1").build());
    g.setSpec(new KeepalivedGroupSpec(null, "eth0", null, null, null, null, null, null, null, null, null, null, null,
        null, null, null, null, null, null, null));
    return g;
  }

  private static Container reloader(DaemonSet ds) {
    return ds.getSpec().getTemplate().getSpec().getContainers().stream()
        .filter(c -> c.getName().equals("config-reloader")).findFirst().orElseThrow();
  }

  @Test
  void theMetricsListenerIsBoundToThePodAddressNotEveryInterface() {
    DaemonSet ds = GroupObjects.daemonSet(group(), SETTINGS, 9700);
    assertThat(ds.getSpec().getTemplate().getSpec().getHostNetwork()).isTrue();
    Container r = reloader(ds);
    assertThat(r.getArgs()).contains("--metrics-port=9700", "--bind-address=$(POD_IP)")
        .noneMatch(a -> a.startsWith("--bind-address=0.0.0.0") || a.startsWith("--bind-address=::"));
    // status.podIP of a host-network pod is the node's primary address: what the PodMonitor scrapes.
    assertThat(r.getEnv()).anySatisfy(e -> {
      assertThat(e.getName()).isEqualTo("POD_IP");
      assertThat(e.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("status.podIP");
    });
    assertThat(r.getPorts()).singleElement().satisfies(p -> {
      assertThat(p.getName()).isEqualTo("metrics");
      assertThat(p.getContainerPort()).isEqualTo(9700);
    });
    assertThat(GroupObjects.podMonitor(group()).getAdditionalProperties().toString()).contains("port=metrics");
  }

  @Test
  void withoutAPortThereIsNoListenerAtAll() {
    Container r = reloader(GroupObjects.daemonSet(group(), SETTINGS, null));
    assertThat(r.getArgs()).noneMatch(a -> a.startsWith("--metrics-port") || a.startsWith("--bind-address"));
    assertThat(r.getPorts()).isEmpty();
    assertThat(r.getEnv()).noneMatch(e -> e.getName().equals("POD_IP"));
  }
}
