package org.ipamoperators.keepalived.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.Test;

/**
 * The renderer's output for representative groups, byte for byte, against {@code src/test/resources/golden/}. Every
 * configuration rendered here is also run through the real {@code keepalived --config-test} by
 * {@code AllRenderedConfigsIT}.
 */
class GoldenConfigTest {

  private static final List<KeepalivedNode> THREE_NODES = List.of(
      KeepalivedNode.of("node-a", "192.0.2.1", "2001:db8::1"),
      KeepalivedNode.of("node-b", "192.0.2.2", "2001:db8::2"),
      KeepalivedNode.of("node-c", "192.0.2.3", "2001:db8::3"));

  private static GroupSettings.Builder settings() {
    return GroupSettings.builder("keepalived", "vips").interfaceName("eth0");
  }

  private static KeepalivedGroupModel model(GroupSettings settings, List<KeepalivedNode> nodes,
      List<ServiceVips> services, Map<String, Integer> ids) {
    InstancePlan.Assembly assembly = InstancePlanner.plan(settings, services, nodes).withRouterIds(ids);
    assertThat(assembly.problems()).isEmpty();
    return assembly.model();
  }

  private static RenderedConfig golden(String name, KeepalivedGroupModel model, String node) {
    RenderedConfig config = RenderedConfigs.render(GoldenConfigTest.class, name, model, node);
    Golden.assertMatches(name + "-" + node, config.text());
    return config;
  }

  @Test
  void oneServiceOneVipMulticastWithTheFastDefaults() {
    KeepalivedGroupModel model = model(settings().build(), THREE_NODES,
        List.of(ServiceVips.of("shop/web", "198.51.100.10")), Map.of("shop/web", 1));

    RenderedConfig config = golden("basic", model, "node-a");

    assertThat(config.notices()).isEmpty();
    assertThat(config.text()).contains("    version 3\n", "    advert_int 0.1\n", "    priority 100\n")
        .doesNotContain("unicast");
  }

  @Test
  void theVipsOfAServiceAreSortedAndDeduplicated() {
    ServiceVips service = ServiceVips.of("shop/web", "198.51.100.20", "198.51.100.3", "198.51.100.100",
        "198.51.100.3");
    KeepalivedGroupModel model = model(settings().build(), THREE_NODES, List.of(service), Map.of("shop/web", 7));

    RenderedConfig config = golden("union-sorted", model, "node-b");

    assertThat(config.text()).containsSubsequence("198.51.100.3\n", "198.51.100.20\n", "198.51.100.100\n");
  }

  @Test
  void aDualStackServiceGetsAnIpv4AndAnIpv6InstanceUnderOneRouterId() {
    KeepalivedGroupModel model = model(settings().build(), THREE_NODES,
        List.of(ServiceVips.of("shop/web", "198.51.100.10", "2001:db8:100::10", "2001:db8:100::11")),
        Map.of("shop/web", 42));

    RenderedConfig config = golden("dual-stack", model, "node-a");

    assertThat(config.text()).contains("vrrp_instance shop/web {", "vrrp_instance shop/web/ipv6 {")
        .containsSubsequence("virtual_router_id 42", "virtual_router_id 42");
  }

  @Test
  void unicastListsTheOtherNodesOfTheInstancesFamily() {
    KeepalivedGroupModel model = model(settings().unicast(true).build(), THREE_NODES,
        List.of(ServiceVips.of("shop/web", "198.51.100.10"), ServiceVips.of("shop/api", "2001:db8:100::20")),
        Map.of("shop/web", 1, "shop/api", 2));

    for (String node : List.of("node-a", "node-b", "node-c")) {
      golden("unicast", model, node);
    }
    String b = KeepalivedConfigRenderer.render(model, "node-b").text();
    assertThat(b).contains("unicast_src_ip 192.0.2.2", "unicast_src_ip 2001:db8::2")
        .containsSubsequence("unicast_peer {\n        192.0.2.1\n        192.0.2.3\n    }")
        .containsSubsequence("unicast_peer {\n        2001:db8::1\n        2001:db8::3\n    }");
  }

  @Test
  void aLoneUnicastNodeSendsToItselfRatherThanFallingBackToMulticast() {
    KeepalivedGroupModel model = model(settings().unicast(true).build(),
        List.of(KeepalivedNode.of("node-a", "192.0.2.1")),
        List.of(ServiceVips.of("shop/web", "198.51.100.10")), Map.of("shop/web", 1));

    RenderedConfig config = golden("unicast-single-node", model, "node-a");

    assertThat(config.text()).contains("unicast_src_ip 192.0.2.1\n    unicast_peer {\n        192.0.2.1\n    }");
  }

  @Test
  void spreadVipsArePreferredByDistinctNodes() {
    ServiceVips service = ServiceVips.of("shop/web", "198.51.100.10", "198.51.100.11", "198.51.100.12").spread(true);
    KeepalivedGroupModel model = model(settings().build(), THREE_NODES, List.of(service),
        Map.of("shop/web/198.51.100.10", 10, "shop/web/198.51.100.11", 11, "shop/web/198.51.100.12", 12));

    List<String> owners = new ArrayList<>();
    for (String node : List.of("node-a", "node-b", "node-c")) {
      String text = golden("spread", model, node).text();
      assertThat(text.split("priority 200", -1)).as("node %s prefers exactly one VIP", node).hasSize(2);
    }
    model.instances().forEach(i -> owners.add(i.owner().orElseThrow()));
    assertThat(owners).containsExactlyInAnyOrder("node-a", "node-b", "node-c");
  }

  @Test
  void passwordAuthenticationRunsIpv4OnVrrp2AndSaysSo() {
    KeepalivedGroupModel model = model(settings().password("s3cr3t-long").build(), THREE_NODES,
        List.of(ServiceVips.of("shop/web", "198.51.100.10", "2001:db8:100::10")), Map.of("shop/web", 5));

    RenderedConfig config = golden("password", model, "node-a");

    assertThat(config.text()).contains("auth_pass s3cr3t-l\n").containsSubsequence("version 2", "advert_int 1\n",
        "version 3", "advert_int 0.1\n");
    assertThat(config.notices()).extracting(Notice::message).anyMatch(m -> m.contains("first 8 characters"))
        .anyMatch(m -> m.contains("needs VRRPv2")).anyMatch(m -> m.contains("not password-protected"));
  }

  @Test
  void verbatimLinesOfTheGroupAndOfAServiceAndRefusedOnes() {
    GroupSettings settings = settings().verbatimConfig(Map.of("vrrp_garp_master_refresh", "60",
        "max_auto_priority", "")).build();
    ServiceVips service = ServiceVips.of("shop/web", "198.51.100.10").withVerbatim(new TreeMap<>(Map.of(
        "track_src_ip", "", "garp_master_delay", "1", "virtual_router_id", "9",
        "notify_master", "\"/bin/sh -c reboot\"")));
    InstancePlan.Assembly assembly = InstancePlanner.plan(settings, List.of(service), THREE_NODES)
        .withRouterIds(Map.of("shop/web", 3));

    RenderedConfig config = RenderedConfigs.render(GoldenConfigTest.class, "verbatim", assembly.model(), "node-a");
    Golden.assertMatches("verbatim-node-a", config.text());

    assertThat(config.text()).contains("    vrrp_garp_master_refresh 60\n", "    max_auto_priority\n",
        "    track_src_ip\n", "    garp_master_delay 1\n").doesNotContain("notify_master", "virtual_router_id 9");
    assertThat(assembly.problems()).singleElement()
        .satisfies(p -> assertThat(p.kind()).isEqualTo(Problem.Kind.VERBATIM_REFUSED))
        .satisfies(p -> assertThat(p.message()).contains("notify_master", "virtual_router_id"));
  }

  @Test
  void aLocalTrafficPolicyServiceTracksItsHealthCheck() {
    ServiceVips service = ServiceVips.of("shop/web", "198.51.100.10").withHealthCheckPort(31234);
    KeepalivedGroupModel model = model(settings().build(), THREE_NODES,
        List.of(service, ServiceVips.of("shop/api", "198.51.100.11")), Map.of("shop/web", 1, "shop/api", 2));

    RenderedConfig config = golden("health-check", model, "node-a");

    assertThat(config.text()).contains("vrrp_script shop/web {", "http://127.0.0.1:31234/health",
        "    track_script {\n        shop/web\n    }");
  }

  @Test
  void keepalivedsOwnDefaultTimingIsASetting() {
    KeepalivedGroupModel model = model(settings().keepalivedDefaultTiming().build(), THREE_NODES,
        List.of(ServiceVips.of("shop/web", "198.51.100.10")), Map.of("shop/web", 1));

    RenderedConfig config = golden("vrrp2-default-timing", model, "node-a");

    assertThat(config.text()).contains("    version 2\n", "    advert_int 1\n", "1 adverts/s in total");
  }

  @Test
  void customTimingPrioritiesAndPreemption() {
    GroupSettings settings = settings().advertInterval(Duration.ofMillis(250)).priority(50).ownerPriority(150)
        .preemptDelay(Duration.ofMillis(1500)).build();
    ServiceVips spread = ServiceVips.of("shop/web", "198.51.100.10", "198.51.100.11").spread(true);
    KeepalivedGroupModel model = model(settings, THREE_NODES, List.of(spread),
        Map.of("shop/web/198.51.100.10", 1, "shop/web/198.51.100.11", 2));
    golden("custom-timing", model, "node-b");

    KeepalivedGroupModel sticky = model(settings().preempt(false).build(), THREE_NODES,
        List.of(ServiceVips.of("shop/web", "198.51.100.10")), Map.of("shop/web", 1));
    RenderedConfig config = golden("nopreempt", sticky, "node-c");

    assertThat(config.text()).contains("    nopreempt\n").doesNotContain("preempt_delay");
  }

  @Test
  void manyVipsInOneInstanceAdvertiseOnlyTheFirstSixteen() {
    List<String> vips = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      vips.add("198.51.100." + (i % 250 + 1));
      vips.add("203.0.113." + (i / 250 + 1));
    }
    for (int i = 1; i <= 100; i++) {
      vips.add("2001:db8:100::" + Integer.toHexString(i));
    }
    KeepalivedGroupModel model = model(settings().build(), THREE_NODES,
        List.of(ServiceVips.of("shop/web", vips.toArray(String[]::new))), Map.of("shop/web", 1));

    RenderedConfig config = golden("many-vips", model, "node-a");

    String v4 = config.text().substring(config.text().indexOf("vrrp_instance shop/web {"),
        config.text().indexOf("vrrp_instance shop/web/ipv6 {"));
    String advertised = v4.substring(v4.indexOf("virtual_ipaddress {"), v4.indexOf("virtual_ipaddress_excluded"));
    assertThat(advertised.lines().filter(l -> l.startsWith("        "))).hasSize(16);
    assertThat(v4.lines().filter(l -> l.startsWith("        ")).count()).isEqualTo(250 + 2);
  }

  @Test
  void sharedInstancesCarryManyServicesUnderFewRouterIds() {
    GroupSettings settings = settings().sharedInstances(4).build();
    List<ServiceVips> services = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      services.add(ServiceVips.of("team" + (i % 3) + "/svc" + i, "198.51.100." + (10 + i)));
    }
    services.add(ServiceVips.of("team0/dual", "198.51.100.50", "2001:db8:100::50"));
    services.add(ServiceVips.of("team1/local", "198.51.100.60").withHealthCheckPort(30001));
    InstancePlan plan = InstancePlanner.plan(settings, services, THREE_NODES);
    Map<String, Integer> ids = new TreeMap<>();
    int next = 1;
    for (String key : plan.routerIdKeys()) {
      ids.put(key, next++);
    }
    InstancePlan.Assembly assembly = plan.withRouterIds(ids);
    assertThat(assembly.problems()).isEmpty();

    for (String node : List.of("node-a", "node-b", "node-c")) {
      golden("shared", assembly.model(), node);
    }
    assertThat(plan.routerIdKeys()).hasSizeLessThanOrEqualTo(5).contains("team1/local");
  }

  @Test
  void eachNodeUsesTheInterfaceItResolvedFromInterfaceFromIp() {
    GroupSettings settings = GroupSettings.builder("keepalived", "vips").interfaceFromIp(Ip.parse("192.0.2.254"))
        .build();
    List<KeepalivedNode> nodes = List.of(KeepalivedNode.of("node-a", "192.0.2.1").withInterface("ens3"),
        KeepalivedNode.of("node-b", "192.0.2.2").withInterface("bond0.100"));
    KeepalivedGroupModel model = model(settings, nodes, List.of(ServiceVips.of("shop/web", "198.51.100.10")),
        Map.of("shop/web", 1));

    assertThat(golden("interface-from-ip", model, "node-a").text()).contains("interface ens3\n");
    assertThat(golden("interface-from-ip", model, "node-b").text()).contains("interface bond0.100\n");
  }

  @Test
  void servicesWithoutRouterIdAreLeftOutAndOnlyThey() {
    List<ServiceVips> services = List.of(ServiceVips.of("shop/a", "198.51.100.1"),
        ServiceVips.of("shop/b", "198.51.100.2"), ServiceVips.of("shop/c", "198.51.100.3"));
    InstancePlan.Assembly assembly = InstancePlanner.plan(settings().build(), services, THREE_NODES)
        .withRouterIds(Map.of("shop/a", 254, "shop/c", 255));

    RenderedConfig config = RenderedConfigs.render(GoldenConfigTest.class, "exhausted", assembly.model(), "node-a");
    Golden.assertMatches("exhausted-node-a", config.text());

    assertThat(config.text()).contains("198.51.100.1\n", "198.51.100.3\n").doesNotContain("198.51.100.2\n");
    assertThat(assembly.problems()).singleElement().satisfies(p -> {
      assertThat(p.kind()).isEqualTo(Problem.Kind.NO_ROUTER_ID);
      assertThat(p.services()).containsExactly(ServiceRef.parse("shop/b"));
    });
  }

  @Test
  void aGroupWithoutServicesStillHasAValidConfiguration() {
    KeepalivedGroupModel model = model(settings().build(), THREE_NODES, List.of(), Map.of());

    assertThat(golden("empty", model, "node-a").text()).contains("0 VRRP instances").doesNotContain("vrrp_instance");
  }
}
