package org.ipamoperators.keepalived.reloader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
import org.ipamoperators.keepalived.failover.KeepalivedProcess;
import org.ipamoperators.testsupport.TestBinaries;
import org.ipamoperators.testsupport.netns.NetnsTest;
import org.ipamoperators.testsupport.netns.NetworkLab;
import org.ipamoperators.testsupport.netns.NetworkNamespace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The config-reloader against a real keepalived in a network namespace: a new configuration is checked, written
 * and applied with one SIGHUP (its VIP appears); an unchanged one sends nothing; one keepalived refuses is never
 * written and the running VIPs stay; {@code interfaceFromIP} is resolved with the namespace's routes.
 */
@NetnsTest
class KeepalivedReloaderIT {
  private static final Duration WAIT = Duration.ofSeconds(20);

  private static String render(String label, boolean placeholder, String... vips) {
    GroupSettings settings = GroupSettings.builder("kg", "g1").interfaceName("eth0").build();
    KeepalivedNode node = KeepalivedNode.of("node-a", "192.0.2.1");
    if (placeholder) {
      node = node.withInterface("ipam-from-ip");
    }
    KeepalivedGroupModel model = InstancePlanner.plan(settings, List.of(ServiceVips.of("shop/web", vips)),
        List.of(node)).withRouterIds(Map.of("shop/web", 42)).model();
    return RenderedConfigs.render(KeepalivedReloaderIT.class, label, model, "node-a").text();
  }

  private static ReloaderOptions options(Path dir, NetworkNamespace ns, Optional<String> fromIp) {
    TestBinaries bin = TestBinaries.fromEnvironment();
    return new ReloaderOptions(dir.resolve("source.conf"), dir.resolve("node.conf"),
        Optional.of(dir.resolve("node.pid")), fromIp, "ipam-from-ip", bin.keepalived().toString(),
        Duration.ofMillis(100), false, List.of(bin.ip().toString(), "netns", "exec", ns.name()));
  }

  @Test
  void reloadsOnlyOnARealChangeAndNeverWritesARefusedConfiguration(NetworkLab lab, @TempDir Path dir)
      throws Exception {
    NetworkNamespace node = lab.namespace("node");
    NetworkNamespace peer = lab.namespace("peer");
    lab.veth(node, "eth0", peer, "eth0");
    node.addAddress("eth0", "192.0.2.1/24");
    peer.addAddress("eth0", "192.0.2.2/24");
    KeepalivedReloader reloader = new KeepalivedReloader(options(dir, node, Optional.empty()));

    assertThat(reloader.syncOnce()).isEqualTo(KeepalivedReloader.Outcome.SOURCE_MISSING);
    String v1 = render("reloader-v1", false, "198.51.100.10");
    Files.writeString(dir.resolve("source.conf"), v1, StandardCharsets.UTF_8);
    assertThat(reloader.syncOnce()).isEqualTo(KeepalivedReloader.Outcome.WRITTEN); // keepalived not running yet
    assertThat(Files.readString(dir.resolve("node.conf"))).isEqualTo(v1);

    try (KeepalivedProcess keepalived = KeepalivedProcess.start(node, dir, "node", v1)) {
      keepalived.awaitRunning(WAIT);
      await().atMost(WAIT).until(() -> node.addresses().contains("198.51.100.10"));
      assertThat(reloader.syncOnce()).isEqualTo(KeepalivedReloader.Outcome.UNCHANGED);

      String v2 = render("reloader-v2", false, "198.51.100.10", "198.51.100.11");
      Files.writeString(dir.resolve("source.conf"), v2, StandardCharsets.UTF_8);
      assertThat(reloader.syncOnce()).isEqualTo(KeepalivedReloader.Outcome.RELOADED);
      await().atMost(WAIT).until(() -> node.addresses().contains("198.51.100.11"));
      for (int i = 0; i < 3; i++) {
        assertThat(reloader.syncOnce()).isEqualTo(KeepalivedReloader.Outcome.UNCHANGED);
      }
      assertThat(reloader.reloads()).isEqualTo(1);

      // keepalived refuses it (unknown keyword): not written, not signalled, the VIPs stay.
      Files.writeString(dir.resolve("source.conf"), v2.replace("nopreempt", "no_such_keyword"),
          StandardCharsets.UTF_8);
      assertThat(reloader.syncOnce()).isEqualTo(KeepalivedReloader.Outcome.INVALID);
      assertThat(reloader.syncOnce()).isEqualTo(KeepalivedReloader.Outcome.INVALID);
      assertThat(reloader.refused()).isEqualTo(1);
      assertThat(reloader.reloads()).isEqualTo(1);
      assertThat(Files.readString(dir.resolve("node.conf"))).isEqualTo(v2);
      assertThat(keepalived.isAlive()).isTrue();
      assertThat(node.addresses()).contains("198.51.100.10", "198.51.100.11");

      // Back to one VIP: applied, the other VIP leaves.
      Files.writeString(dir.resolve("source.conf"), v1, StandardCharsets.UTF_8);
      assertThat(reloader.syncOnce()).isEqualTo(KeepalivedReloader.Outcome.RELOADED);
      await().atMost(WAIT).until(() -> !node.addresses().contains("198.51.100.11"));
      assertThat(node.addresses()).contains("198.51.100.10");
      assertThat(reloader.reloads()).isEqualTo(2);

      // What the pod's /metrics reports (distribution's keepalived-reloader command serves these).
      assertThat(reloader.keepalivedUp()).isTrue();
      assertThat(reloader.refused()).isEqualTo(1);
      assertThat(reloader.runningConfigSha256()).isPresent();
    }
    assertThat(reloader.keepalivedUp()).isFalse();
  }

  @Test
  void interfaceFromIpIsResolvedWithTheNodesRoutes(NetworkLab lab, @TempDir Path dir) throws Exception {
    NetworkNamespace node = lab.namespace("node");
    NetworkNamespace peer = lab.namespace("peer");
    lab.veth(node, "uplink7", peer, "eth0");
    node.addAddress("uplink7", "192.0.2.1/24");
    String source = render("reloader-from-ip", true, "198.51.100.20");
    assertThat(source).contains("interface ipam-from-ip");
    Files.writeString(dir.resolve("source.conf"), source, StandardCharsets.UTF_8);

    KeepalivedReloader unroutable = new KeepalivedReloader(options(dir, node, Optional.of("203.0.113.9")));
    assertThat(unroutable.syncOnce()).isEqualTo(KeepalivedReloader.Outcome.INTERFACE_UNRESOLVED);
    assertThat(dir.resolve("node.conf")).doesNotExist();

    KeepalivedReloader reloader = new KeepalivedReloader(options(dir, node, Optional.of("192.0.2.2")));
    assertThat(reloader.syncOnce()).isEqualTo(KeepalivedReloader.Outcome.WRITTEN);
    String written = Files.readString(dir.resolve("node.conf"));
    assertThat(written).contains("interface uplink7").doesNotContain("ipam-from-ip");
    try (KeepalivedProcess keepalived = KeepalivedProcess.start(node, dir, "node", written)) {
      keepalived.awaitRunning(WAIT);
      await().atMost(WAIT).until(() -> node.addresses().contains("198.51.100.20"));
    }
  }
}
