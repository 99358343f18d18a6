package org.ipamoperators.keepalived.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.junit.jupiter.api.Test;

class KeepalivedConfigRendererTest {

  private static final GroupSettings SETTINGS =
      GroupSettings.builder("keepalived", "vips").interfaceName("eth0").build();
  private static final List<KeepalivedNode> NODES = List.of(KeepalivedNode.of("node-a", "192.0.2.1", "2001:db8::1"),
      KeepalivedNode.of("node-b", "192.0.2.2"), KeepalivedNode.of("node-c", "192.0.2.3", "2001:db8::3"));

  @Test
  void theSameInputInAnyOrderGivesByteIdenticalConfigurations() {
    List<ServiceVips> services = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      ServiceVips service = ServiceVips.of("ns" + (i % 4) + "/svc" + i, "198.51.100." + (i + 1),
          "2001:db8:100::" + Integer.toHexString(i + 1));
      services.add(i % 3 == 0 ? service.spread(true) : service);
    }
    GroupSettings settings = SETTINGS.toBuilder().unicast(true).build();
    Map<String, Integer> ids = ids(InstancePlanner.plan(settings, services, NODES));
    List<String> reference = KeepalivedConfigRenderer.renderAll(
        InstancePlanner.plan(settings, services, NODES).withRouterIds(ids).model()).stream()
        .map(RenderedConfig::text).toList();
    Random random = new Random(11);
    for (int round = 0; round < 10; round++) {
      List<ServiceVips> shuffled = new ArrayList<>(services);
      Collections.shuffle(shuffled, random);
      List<KeepalivedNode> nodes = new ArrayList<>(NODES);
      Collections.shuffle(nodes, random);
      KeepalivedGroupModel model = InstancePlanner.plan(settings, shuffled, nodes).withRouterIds(new TreeMap<>(ids))
          .model();
      assertThat(KeepalivedConfigRenderer.renderAll(model)).extracting(RenderedConfig::text)
          .containsExactlyElementsOf(reference);
    }
    RenderedConfigs.render(getClass(), "thirty-services", InstancePlanner.plan(settings, services, NODES)
        .withRouterIds(ids).model(), "node-a");
  }

  @Test
  void aUnicastNodeWithoutAnAddressOfTheFamilyLeavesThatFamilysInstancesOutAndSaysSo() {
    GroupSettings settings = SETTINGS.toBuilder().unicast(true).build();
    KeepalivedGroupModel model = InstancePlanner.plan(settings,
        List.of(ServiceVips.of("shop/web", "198.51.100.1", "2001:db8:100::1")), NODES)
        .withRouterIds(Map.of("shop/web", 9)).model();

    RenderedConfig b = RenderedConfigs.render(getClass(), "no-ipv6-on-node", model, "node-b");
    RenderedConfig a = RenderedConfigs.render(getClass(), "no-ipv6-on-node", model, "node-a");

    assertThat(b.text()).contains("vrrp_instance shop/web {").doesNotContain("shop/web/ipv6");
    assertThat(b.notices()).extracting(Notice::message).anyMatch(m -> m.contains("unicast needs an IPv6 address"));
    assertThat(a.text()).contains("unicast_src_ip 2001:db8::1\n    unicast_peer {\n        2001:db8::3\n    }");
    assertThat(a.notices()).extracting(Notice::message).anyMatch(m -> m.contains("node-b"));
  }

  @Test
  void aNodeThatHasNotResolvedInterfaceFromIpCannotBeRendered() {
    GroupSettings settings = GroupSettings.builder("keepalived", "vips").interfaceFromIp(Ip.parse("192.0.2.254"))
        .build();
    KeepalivedGroupModel model = new KeepalivedGroupModel(settings, List.of(KeepalivedNode.of("node-a", "192.0.2.1")),
        List.of(VrrpInstance.of("shop/web", 1, Ip.parse("198.51.100.1"))));

    assertThatThrownBy(() -> KeepalivedConfigRenderer.render(model, "node-a"))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("interfaceFromIP 192.0.2.254");
    assertThatThrownBy(() -> KeepalivedConfigRenderer.render(model, "node-z"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("node-z");
  }

  @Test
  void theModelRefusesWhatKeepalivedWouldRefuse() {
    Ip v1 = Ip.parse("198.51.100.1");
    Ip v2 = Ip.parse("198.51.100.2");
    Ip v6 = Ip.parse("2001:db8:100::1");
    assertThatThrownBy(() -> new KeepalivedGroupModel(SETTINGS, NODES,
        List.of(VrrpInstance.of("a/a", 7, v1), VrrpInstance.of("b/b", 7, v2)))).hasMessageContaining("router id 7");
    assertThat(new KeepalivedGroupModel(SETTINGS, NODES,
        List.of(VrrpInstance.of("a/a", 7, v1), VrrpInstance.of("b/b", 7, v6))).instances()).hasSize(2);
    assertThatThrownBy(() -> new KeepalivedGroupModel(SETTINGS, NODES,
        List.of(VrrpInstance.of("a/a", 7, v1), VrrpInstance.of("b/b", 8, v1)))).hasMessageContaining("VIP");
    assertThatThrownBy(() -> VrrpInstance.of("a/a", 0, v1)).hasMessageContaining("1..255");
    assertThatThrownBy(() -> VrrpInstance.of("a/a", 256, v1)).hasMessageContaining("1..255");
    assertThatThrownBy(() -> VrrpInstance.of("a/a", 1, v1, v6)).hasMessageContaining("cannot carry");
    assertThatThrownBy(() -> new KeepalivedGroupModel(SETTINGS, NODES,
        List.of(VrrpInstance.of("a/a", 1, v1).withOwner("node-x")))).hasMessageContaining("node-x");
  }

  @Test
  void versionsAndAdvertIntervalsPerFamily() {
    GroupSettings withPassword = SETTINGS.toBuilder().password("secret").build();
    assertThat(KeepalivedConfigRenderer.vrrpVersion(withPassword, IpFamily.IPV4)).isEqualTo(2);
    assertThat(KeepalivedConfigRenderer.vrrpVersion(withPassword, IpFamily.IPV6)).isEqualTo(3);
    assertThat(KeepalivedConfigRenderer.advertInterval(withPassword, IpFamily.IPV4)).hasSeconds(1);
    assertThat(KeepalivedConfigRenderer.advertInterval(withPassword.toBuilder()
        .advertInterval(Duration.ofMillis(2010)).build(), IpFamily.IPV4)).hasSeconds(3);
    assertThat(KeepalivedConfigRenderer.advertInterval(withPassword, IpFamily.IPV6)).hasMillis(100);
    GroupSettings slowV2 = SETTINGS.toBuilder().vrrpVersion(2).advertInterval(Duration.ofSeconds(60)).build();
    assertThat(KeepalivedConfigRenderer.advertInterval(slowV2, IpFamily.IPV6)).hasMillis(40_950);
  }

  @Test
  void decimals() {
    assertThat(KeepalivedConfigRenderer.decimal(0.1)).isEqualTo("0.1");
    assertThat(KeepalivedConfigRenderer.decimal(1.0)).isEqualTo("1");
    assertThat(KeepalivedConfigRenderer.decimal(40.95)).isEqualTo("40.95");
    assertThat(KeepalivedConfigRenderer.decimal(10.0)).isEqualTo("10");
    assertThat(KeepalivedConfigRenderer.decimal(2550.0)).isEqualTo("2550");
  }

  @Test
  void theDigestFollowsTheText() {
    KeepalivedGroupModel model = new KeepalivedGroupModel(SETTINGS, NODES,
        List.of(VrrpInstance.of("a/a", 1, Ip.parse("198.51.100.1"))));
    RenderedConfig a = KeepalivedConfigRenderer.render(model, "node-a");

    assertThat(KeepalivedConfigRenderer.render(model, "node-a").sha256()).isEqualTo(a.sha256()).hasSize(64);
    assertThat(KeepalivedConfigRenderer.render(model, "node-b").sha256()).isNotEqualTo(a.sha256());
  }

  static Map<String, Integer> ids(InstancePlan plan) {
    Map<String, Integer> ids = new TreeMap<>();
    for (String key : plan.routerIdKeys()) {
      ids.put(key, ids.size() + 1);
    }
    return ids;
  }
}
