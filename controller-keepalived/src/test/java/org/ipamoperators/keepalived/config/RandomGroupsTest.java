package org.ipamoperators.keepalived.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Seeded random groups (settings, nodes, services, router ids with gaps): each node's configuration is rendered
 * twice (identical), checked for structure here and recorded, so {@code AllRenderedConfigsIT} puts all of them
 * through the real {@code keepalived --config-test} too.
 */
class RandomGroupsTest {

  private static final Pattern INSTANCE = Pattern.compile(
      "(?s)vrrp_instance (\\S+) \\{\\n.*?virtual_router_id (\\d+)\\n    version (\\d)\\n.*?virtual_ipaddress \\{\\n(.*?)    }");

  @Test
  void randomGroupsRenderDeterministicWellFormedConfigurations() {
    Random random = new Random(20240601);
    for (int group = 0; group < 40; group++) {
      GroupSettings settings = settings(random, group);
      List<KeepalivedNode> nodes = nodes(random);
      List<ServiceVips> services = services(random, group);
      InstancePlan plan = InstancePlanner.plan(settings, services, nodes);
      Map<String, Integer> ids = new TreeMap<>();
      int id = 1 + random.nextInt(20);
      for (String key : plan.routerIdKeys()) {
        if (random.nextInt(10) > 0) {
          ids.put(key, id);
        }
        id += 1 + random.nextInt(3);
        if (id > 255) {
          break;
        }
      }
      KeepalivedGroupModel model = plan.withRouterIds(ids).model();
      Map<String, String> configs = new TreeMap<>();
      Set<org.ipamoperators.core.address.Ip> expected = new java.util.TreeSet<>();
      for (KeepalivedNode node : nodes) {
        RenderedConfig rendered = RenderedConfigs.render(getClass(), "group" + group, model, node.name());
        String text = rendered.text();
        assertThat(KeepalivedConfigRenderer.render(model, node.name()).text()).isEqualTo(text);
        assertWellFormed(text);
        configs.put(node.name(), text);
        Set<String> leftOut = new HashSet<>();
        rendered.notices().stream().filter(n -> n.message().startsWith("left out")).forEach(n -> leftOut.add(n.subject()));
        model.instances().stream().filter(i -> !leftOut.contains(i.name())).forEach(i -> expected.addAll(i.vips()));
      }
      assertThat(VipHandover.rendered(configs)).as("the VIPs read back from group %d's configurations", group)
          .isEqualTo(expected);
    }
  }

  private static void assertWellFormed(String text) {
    int depth = 0;
    for (char c : text.toCharArray()) {
      depth += c == '{' ? 1 : c == '}' ? -1 : 0;
      assertThat(depth).isGreaterThanOrEqualTo(0);
    }
    assertThat(depth).isZero();
    Set<String> routerIds = new HashSet<>();
    Matcher m = INSTANCE.matcher(text);
    while (m.find()) {
      boolean v6 = m.group(1).endsWith("/ipv6");
      assertThat(routerIds.add((v6 ? "6/" : "4/") + m.group(2))).as("router id %s twice", m.group(2)).isTrue();
      assertThat(m.group(4).lines().count()).isBetween(1L, (long) GroupSettings.MAX_ADVERTISED_VIPS_LIMIT);
      assertThat(m.group(4).contains(":")).isEqualTo(v6);
    }
  }

  private static GroupSettings settings(Random random, int group) {
    GroupSettings.Builder b = GroupSettings.builder("ns" + group, "group" + group)
        .interfaceName(random.nextBoolean() ? "eth0" : "ens" + random.nextInt(4))
        .unicast(random.nextBoolean())
        .priority(50 + random.nextInt(100))
        .ownerPriority(200 + random.nextInt(50))
        .preempt(random.nextInt(4) > 0)
        .sharedInstances(random.nextInt(3) == 0 ? 1 + random.nextInt(8) : 0)
        .maxAdvertisedVips(1 + random.nextInt(20));
    switch (random.nextInt(4)) {
      case 0 -> b.keepalivedDefaultTiming();
      case 1 -> b.advertInterval(Duration.ofMillis(10L * (1 + random.nextInt(200))));
      default -> { }
    }
    if (random.nextInt(4) == 0) {
      b.password("pw" + random.nextInt(1_000_000_000));
    }
    if (random.nextInt(3) == 0) {
      b.preemptDelay(Duration.ofMillis(10L * random.nextInt(1000)));
    }
    if (random.nextBoolean()) {
      b.verbatimConfig(Map.of("vrrp_garp_master_refresh", Integer.toString(random.nextInt(120))));
    }
    return b.build();
  }

  private static List<KeepalivedNode> nodes(Random random) {
    int count = 1 + random.nextInt(5);
    List<KeepalivedNode> nodes = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      int shape = random.nextInt(5);
      List<String> addresses = new ArrayList<>();
      if (shape != 0) {
        addresses.add("192.0.2." + i);
      }
      if (shape != 1) {
        addresses.add("2001:db8::" + Integer.toHexString(i));
      }
      nodes.add(KeepalivedNode.of("worker-" + i, addresses.toArray(String[]::new)));
    }
    return nodes;
  }

  private static List<ServiceVips> services(Random random, int group) {
    int count = random.nextInt(15);
    List<ServiceVips> services = new ArrayList<>();
    for (int s = 0; s < count; s++) {
      List<String> vips = new ArrayList<>();
      int n = random.nextInt(6);
      for (int v = 0; v < n; v++) {
        vips.add(random.nextInt(3) == 0
            ? "2001:db8:" + Integer.toHexString(100 + group) + "::" + Integer.toHexString(1 + random.nextInt(40))
            : (random.nextBoolean() ? "198.51.100." : "203.0.113.") + (1 + random.nextInt(254)));
      }
      if (random.nextInt(10) == 0) {
        for (int v = 0; v < 120; v++) {
          vips.add("10." + group + "." + (v / 250) + "." + (v % 250 + 1));
        }
      }
      ServiceVips service = ServiceVips.of("app" + (s % 3) + "/svc-" + s, vips.toArray(String[]::new))
          .spread(random.nextInt(3) == 0);
      if (random.nextInt(5) == 0) {
        service = service.withHealthCheckPort(30000 + random.nextInt(2000));
      }
      if (random.nextInt(5) == 0) {
        service = service.withVerbatim(Map.of("garp_master_delay", Integer.toString(random.nextInt(10))));
      }
      services.add(service);
    }
    return services;
  }
}
