package org.ipamoperators.keepalived.failover;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.keepalived.config.GroupSettings;
import org.ipamoperators.keepalived.config.InstancePlan;
import org.ipamoperators.keepalived.config.InstancePlanner;
import org.ipamoperators.keepalived.config.KeepalivedGroupModel;
import org.ipamoperators.keepalived.config.KeepalivedNode;
import org.ipamoperators.keepalived.config.ServiceVips;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Real VRRP failover: network namespaces as nodes, each running the real keepalived with the configuration the
 * renderer produced for it. The master's keepalived is SIGKILLed (a node crash: no goodbye advert) and the VIP
 * must appear on a surviving node. Takeover times are logged, not asserted (see {@code TakeoverBenchmark} and
 * docs/benchmarks.md for the measurements).
 */
class VrrpFailoverIT {

  private static final Logger LOG = LoggerFactory.getLogger(VrrpFailoverIT.class);
  private static final Duration CONVERGE = Duration.ofSeconds(15);
  private static final Duration TAKEOVER = Duration.ofSeconds(15);

  static final List<KeepalivedNode> TWO_NODES = List.of(
      KeepalivedNode.of("node-a", "192.0.2.1", "2001:db8::1"),
      KeepalivedNode.of("node-b", "192.0.2.2", "2001:db8::2"));
  static final List<KeepalivedNode> THREE_NODES = List.of(
      KeepalivedNode.of("node-a", "192.0.2.1", "2001:db8::1"),
      KeepalivedNode.of("node-b", "192.0.2.2", "2001:db8::2"),
      KeepalivedNode.of("node-c", "192.0.2.3", "2001:db8::3"));

  static GroupSettings.Builder settings() {
    return GroupSettings.builder("keepalived", "vips").interfaceName(VrrpCluster.INTERFACE);
  }

  /** Plans {@code services} and gives the keys router ids 1, 2, ... in key order. */
  static KeepalivedGroupModel model(GroupSettings settings, List<KeepalivedNode> nodes, List<ServiceVips> services) {
    InstancePlan plan = InstancePlanner.plan(settings, services, nodes);
    Map<String, Integer> ids = new java.util.TreeMap<>();
    for (String key : plan.routerIdKeys()) {
      ids.put(key, 50 + ids.size());
    }
    InstancePlan.Assembly assembly = plan.withRouterIds(ids);
    assertThat(assembly.problems()).isEmpty();
    return assembly.model();
  }

  @Test
  void anIpv4VipMovesToTheBackupWhenTheMasterCrashes() {
    Ip vip = Ip.parse("198.51.100.10");
    KeepalivedGroupModel model = model(settings().build(), TWO_NODES,
        List.of(ServiceVips.of("shop/web", vip.toString())));
    try (VrrpCluster cluster = VrrpCluster.create(TWO_NODES, getClass())) {
      cluster.startAll(model);
      String master = cluster.awaitSingleHolder(vip, CONVERGE);

      VrrpCluster.Takeover takeover = cluster.crashAndMeasure(master, vip, TAKEOVER);

      LOG.info("IPv4, multicast, 2 nodes: {} took {} over from {} in {} s", vip, takeover.newMaster(), master,
          takeover.seconds());
      assertThat(takeover.newMaster()).isNotEqualTo(master);
      assertThat(cluster.holders(vip)).contains(takeover.newMaster());
      assertThat(cluster.awaitSingleHolder(vip, cluster.nodes().stream().filter(n -> !n.equals(master)).toList(),
          CONVERGE)).isEqualTo(takeover.newMaster());
    }
  }

  @Test
  void anIpv6VipMovesToTheBackupWhenTheMasterCrashes() {
    Ip vip = Ip.parse("2001:db8:100::10");
    KeepalivedGroupModel model = model(settings().build(), TWO_NODES,
        List.of(ServiceVips.of("shop/web6", vip.toString())));
    assertThat(model.instances()).singleElement().satisfies(i -> assertThat(i.name()).isEqualTo("shop/web6/ipv6"));
    try (VrrpCluster cluster = VrrpCluster.create(TWO_NODES, getClass())) {
      cluster.startAll(model);
      String master = cluster.awaitSingleHolder(vip, CONVERGE);

      VrrpCluster.Takeover takeover = cluster.crashAndMeasure(master, vip, TAKEOVER);

      LOG.info("IPv6, multicast, 2 nodes: {} took {} over from {} in {} s", vip, takeover.newMaster(), master,
          takeover.seconds());
      assertThat(takeover.newMaster()).isNotEqualTo(master);
      assertThat(cluster.holders(vip)).contains(takeover.newMaster());
    }
  }

  @Test
  void unicastDualStackOnThreeNodesKeepsEachVipOnExactlyOneSurvivor() {
    Ip v4 = Ip.parse("198.51.100.20");
    Ip v6 = Ip.parse("2001:db8:100::20");
    KeepalivedGroupModel model = model(settings().unicast(true).build(), THREE_NODES,
        List.of(ServiceVips.of("shop/dual", v4.toString(), v6.toString())));
    assertThat(model.instances()).extracting(i -> i.routerId()).containsExactly(50, 50);
    try (VrrpCluster cluster = VrrpCluster.create(THREE_NODES, getClass())) {
      cluster.startAll(model);
      String master = cluster.awaitSingleHolder(v4, CONVERGE);
      cluster.awaitSingleHolder(v6, CONVERGE);

      VrrpCluster.Takeover takeover = cluster.crashAndMeasure(master, v4, TAKEOVER);

      LOG.info("IPv4, unicast, 3 nodes: {} took {} over from {} in {} s", v4, takeover.newMaster(), master,
          takeover.seconds());
      List<String> survivors = cluster.nodes().stream().filter(n -> !n.equals(master)).toList();
      assertThat(survivors).contains(takeover.newMaster());
      assertThat(cluster.awaitSingleHolder(v4, survivors, CONVERGE)).isIn(survivors);
      assertThat(cluster.awaitSingleHolder(v6, survivors, CONVERGE)).isIn(survivors);
    }
  }

  @Test
  void spreadVipsSitOnTheirPreferredNodesAndComeBackAfterARestart() {
    List<Ip> vips = List.of(Ip.parse("198.51.100.31"), Ip.parse("198.51.100.32"), Ip.parse("198.51.100.33"));
    KeepalivedGroupModel model = model(settings().build(), THREE_NODES, List.of(ServiceVips.of("shop/spread",
        vips.stream().map(Ip::toString).toArray(String[]::new)).spread(true)));
    try (VrrpCluster cluster = VrrpCluster.create(THREE_NODES, getClass())) {
      cluster.startAll(model);
      for (var instance : model.instances()) {
        Ip vip = instance.vips().first();
        assertThat(cluster.awaitSingleHolder(vip, CONVERGE)).as("holder of %s", vip)
            .isEqualTo(instance.owner().orElseThrow());
      }
      var moved = model.instances().get(0);
      Ip vip = moved.vips().first();
      String owner = moved.owner().orElseThrow();

      VrrpCluster.Takeover takeover = cluster.crashAndMeasure(owner, vip, TAKEOVER);
      LOG.info("spread, multicast, 3 nodes: {} took {} over from {} in {} s", vip, takeover.newMaster(), owner,
          takeover.seconds());
      assertThat(takeover.newMaster()).isNotEqualTo(owner);

      cluster.start(model, owner);
      assertThat(cluster.awaitSingleHolder(vip, CONVERGE)).as("%s back on its preferred node", vip)
          .isEqualTo(owner);
    }
  }

  @Test
  void aPasswordProtectedGroupFailsOverWithVrrp2() {
    Ip vip = Ip.parse("198.51.100.40");
    KeepalivedGroupModel model = model(settings().password("hunter22").build(), TWO_NODES,
        List.of(ServiceVips.of("shop/secret", vip.toString())));
    try (VrrpCluster cluster = VrrpCluster.create(TWO_NODES, getClass())) {
      cluster.startAll(model);
      String master = cluster.awaitSingleHolder(vip, CONVERGE);

      VrrpCluster.Takeover takeover = cluster.crashAndMeasure(master, vip, TAKEOVER);

      LOG.info("IPv4, VRRPv2 with password, 2 nodes: {} took {} over from {} in {} s", vip, takeover.newMaster(),
          master, takeover.seconds());
      assertThat(takeover.newMaster()).isNotEqualTo(master);
    }
  }
}
