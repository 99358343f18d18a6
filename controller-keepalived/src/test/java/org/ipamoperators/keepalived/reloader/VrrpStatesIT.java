package org.ipamoperators.keepalived.reloader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.ipamoperators.keepalived.config.GroupSettings;
import org.ipamoperators.keepalived.config.InstancePlanner;
import org.ipamoperators.keepalived.config.KeepalivedGroupModel;
import org.ipamoperators.keepalived.config.KeepalivedNode;
import org.ipamoperators.keepalived.config.RenderedConfigs;
import org.ipamoperators.keepalived.config.ServiceVips;
import org.ipamoperators.keepalived.reloader.VrrpInstanceState.State;
import org.ipamoperators.testsupport.netns.NetnsTest;
import org.ipamoperators.testsupport.netns.NetworkLab;
import org.ipamoperators.testsupport.netns.NetworkNamespace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link VrrpStates} against two real keepalived nodes in network namespaces, each with the configuration the
 * renderer produced for it: the first node becomes MASTER of the instance and the second BACKUP, and each says so;
 * when the master crashes, the backup says MASTER. The VIP on the nodes confirms every answer.
 */
@NetnsTest
class VrrpStatesIT {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final String VIP = "198.51.100.10";
  private static final List<KeepalivedNode> NODES = List.of(
      KeepalivedNode.of("node-a", "192.0.2.1"), KeepalivedNode.of("node-b", "192.0.2.2"));

  private static String config(String node) {
    GroupSettings settings = GroupSettings.builder("kg", "g1").interfaceName("eth0").build();
    KeepalivedGroupModel model = InstancePlanner.plan(settings, List.of(ServiceVips.of("shop/web", VIP)), NODES)
        .withRouterIds(Map.of("shop/web", 42)).model();
    return RenderedConfigs.render(VrrpStatesIT.class, "vrrp-states-" + node, model, node).text();
  }

  private static VrrpInstanceState web(State state) {
    return new VrrpInstanceState("shop/web", state, 42, Optional.of("eth0"));
  }

  private static boolean holdsVip(NetworkNamespace ns) {
    return (" " + ns.addresses().replace('\n', ' ')).contains(" " + VIP + "/");
  }

  @Test
  void eachNodeReportsItsOwnStateAndTheBackupBecomesMasterWhenTheMasterCrashes(NetworkLab lab, @TempDir Path dir) {
    NetworkNamespace a = lab.namespace("node-a");
    NetworkNamespace b = lab.namespace("node-b");
    lab.veth(a, "eth0", b, "eth0");
    a.addAddress("eth0", "192.0.2.1/24");
    b.addAddress("eth0", "192.0.2.2/24");

    try (DumpingKeepalived nodeA = DumpingKeepalived.start(a, dir, "node-a", config("node-a"))) {
      // Alone on the link, node-a becomes master; only then node-b joins (the renderer's nopreempt keeps a).
      await().atMost(WAIT).untilAsserted(() -> assertThat(nodeA.vrrpStates()).containsExactly(web(State.MASTER)));
      try (DumpingKeepalived nodeB = DumpingKeepalived.start(b, dir, "node-b", config("node-b"))) {
        await().atMost(WAIT).untilAsserted(() -> assertThat(nodeB.vrrpStates()).containsExactly(web(State.BACKUP)));
        assertThat(nodeA.vrrpStates()).containsExactly(web(State.MASTER));
        assertThat(holdsVip(a)).isTrue();
        assertThat(holdsVip(b)).isFalse();
        assertThat(nodeA.dumpFile()).isNotEqualTo(nodeB.dumpFile());

        long deadPid = nodeA.pid();
        nodeA.crash();
        await().atMost(WAIT).untilAsserted(() -> assertThat(nodeB.vrrpStates()).containsExactly(web(State.MASTER)));
        await().atMost(WAIT).until(() -> holdsVip(b));
        // The crashed node answers nothing, and nothing is thrown.
        assertThat(new VrrpStates(Duration.ZERO, Duration.ofMillis(200)).read(deadPid, VrrpStates.dumpFileOf(deadPid)))
            .isEmpty();
      }
    }
  }
}
