package org.ipamoperators.keepalived.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.ipamoperators.core.address.IpFamily;
import org.junit.jupiter.api.Test;

class InstancePlannerTest {

  private static final GroupSettings SETTINGS =
      GroupSettings.builder("keepalived", "vips").interfaceName("eth0").build();
  private static final List<KeepalivedNode> NODES = List.of(KeepalivedNode.of("node-a", "192.0.2.1"),
      KeepalivedNode.of("node-b", "192.0.2.2"), KeepalivedNode.of("node-c", "192.0.2.3"));

  @Test
  void oneKeyPerServiceWithBothFamiliesUnderIt() {
    InstancePlan plan = InstancePlanner.plan(SETTINGS, List.of(
        ServiceVips.of("shop/web", "198.51.100.1", "198.51.100.2", "2001:db8:100::1"),
        ServiceVips.of("shop/api", "198.51.100.3")), NODES);

    assertThat(plan.routerIdKeys()).containsExactly("shop/api", "shop/web");
    assertThat(plan.instances()).extracting(PlannedInstance::key, PlannedInstance::family).containsExactly(
        org.assertj.core.groups.Tuple.tuple("shop/api", IpFamily.IPV4),
        org.assertj.core.groups.Tuple.tuple("shop/web", IpFamily.IPV4),
        org.assertj.core.groups.Tuple.tuple("shop/web", IpFamily.IPV6));
    assertThat(plan.instances()).allSatisfy(i -> assertThat(i.owner()).isEmpty());
    assertThat(plan.problems()).isEmpty();
  }

  @Test
  void aServiceWithoutVipGetsNoKeyAndAProblem() {
    InstancePlan plan = InstancePlanner.plan(SETTINGS, List.of(ServiceVips.of("shop/pending")), NODES);

    assertThat(plan.routerIdKeys()).isEmpty();
    assertThat(plan.problems()).singleElement().satisfies(p -> assertThat(p.kind()).isEqualTo(Problem.Kind.NO_VIP));
  }

  @Test
  void aVipClaimedByTwoServicesStaysWithTheFirst() {
    InstancePlan plan = InstancePlanner.plan(SETTINGS, List.of(ServiceVips.of("b/two", "198.51.100.1", "198.51.100.2"),
        ServiceVips.of("a/one", "198.51.100.1")), NODES);

    assertThat(plan.servicesByKey()).containsOnlyKeys("a/one", "b/two");
    assertThat(plan.instances()).filteredOn(i -> i.key().equals("b/two")).singleElement()
        .satisfies(i -> assertThat(i.vips()).extracting(Object::toString).containsExactly("198.51.100.2"));
    assertThat(plan.problems()).singleElement().satisfies(p -> {
      assertThat(p.kind()).isEqualTo(Problem.Kind.DUPLICATE_VIP);
      assertThat(p.services()).containsExactly(ServiceRef.parse("b/two"));
    });
  }

  @Test
  void spreadVipsGetDistinctPreferredNodesWhenThereAreEnoughNodes() {
    for (int n = 1; n <= 3; n++) {
      List<String> vips = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        vips.add("198.51.100." + (10 + i));
      }
      for (String name : List.of("web", "api", "db", "cache")) {
        InstancePlan plan = InstancePlanner.plan(SETTINGS,
            List.of(ServiceVips.of("shop/" + name, vips.toArray(String[]::new)).spread(true)), NODES);
        assertThat(plan.instances()).hasSize(n);
        assertThat(plan.instances().stream().map(i -> i.owner().orElseThrow()).distinct()).hasSize(n);
        assertThat(plan.routerIdKeys()).allMatch(k -> k.startsWith("shop/" + name + "/198.51.100."));
      }
    }
  }

  @Test
  void theFirstSpreadVipOfDifferentServicesDoesNotAlwaysLandOnTheFirstNode() {
    List<ServiceVips> services = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      services.add(ServiceVips.of("shop/svc" + i, "198.51.100." + (i + 1)).spread(true));
    }
    InstancePlan plan = InstancePlanner.plan(SETTINGS, services, NODES);

    assertThat(plan.instances().stream().map(i -> i.owner().orElseThrow()).distinct()).hasSize(3);
  }

  @Test
  void spreadWithoutNodesPlansInstancesWithoutPreferredNode() {
    InstancePlan plan = InstancePlanner.plan(SETTINGS,
        List.of(ServiceVips.of("shop/web", "198.51.100.1", "198.51.100.2").spread(true)), List.of());

    assertThat(plan.routerIdKeys()).containsExactly("shop/web/198.51.100.1", "shop/web/198.51.100.2");
    assertThat(plan.instances()).allSatisfy(i -> assertThat(i.owner()).isEmpty());
  }

  @Test
  void thePlanDoesNotDependOnInputOrder() {
    List<ServiceVips> services = new ArrayList<>(List.of(
        ServiceVips.of("b/x", "198.51.100.9", "2001:db8:100::9"),
        ServiceVips.of("a/y", "198.51.100.3", "198.51.100.1").spread(true),
        ServiceVips.of("c/z", "198.51.100.5").withHealthCheckPort(30000)));
    List<KeepalivedNode> nodes = new ArrayList<>(NODES);
    InstancePlan reference = InstancePlanner.plan(SETTINGS, services, nodes);
    Random random = new Random(7);
    for (int i = 0; i < 20; i++) {
      Collections.shuffle(services, random);
      Collections.shuffle(nodes, random);
      assertThat(InstancePlanner.plan(SETTINGS, services, nodes)).isEqualTo(reference);
    }
  }

  @Test
  void sharedInstancesBoundTheRouterIdsAndAddingAServiceMovesNoOther() {
    GroupSettings shared = SETTINGS.toBuilder().sharedInstances(8).build();
    List<ServiceVips> services = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      services.add(ServiceVips.of("ns" + (i % 7) + "/svc" + i, "10." + (i / 250) + "." + (i % 250) + ".1"));
    }
    InstancePlan before = InstancePlanner.plan(shared, services, NODES);
    assertThat(before.routerIdKeys()).hasSizeLessThanOrEqualTo(8).allMatch(k -> k.startsWith("shared:"));
    assertThat(before.instances().stream().mapToInt(i -> i.vips().size()).sum()).isEqualTo(1000);
    assertThat(before.instances().stream().map(i -> i.owner().orElseThrow()).distinct()).hasSize(3);

    services.add(ServiceVips.of("late/comer", "10.9.9.9"));
    InstancePlan after = InstancePlanner.plan(shared, services, NODES);

    Map<String, String> keyOfVipBefore = keysOfVips(before);
    Map<String, String> keyOfVipAfter = keysOfVips(after);
    keyOfVipBefore.forEach((vip, key) -> assertThat(keyOfVipAfter.get(vip)).as(vip).isEqualTo(key));
  }

  @Test
  void inSharedModeServicesWithVerbatimLinesOrAHealthCheckKeepTheirOwnInstance() {
    GroupSettings shared = SETTINGS.toBuilder().sharedInstances(2).build();
    InstancePlan plan = InstancePlanner.plan(shared, List.of(
        ServiceVips.of("shop/plain", "198.51.100.1"),
        ServiceVips.of("shop/tuned", "198.51.100.2").withVerbatim(Map.of("garp_master_delay", "1")),
        ServiceVips.of("shop/local", "198.51.100.3").withHealthCheckPort(31000),
        ServiceVips.of("shop/refused", "198.51.100.4").withVerbatim(Map.of("notify", "/bin/true"))), NODES);

    assertThat(plan.routerIdKeys()).contains("shop/tuned", "shop/local").doesNotContain("shop/plain",
        "shop/refused");
    assertThat(plan.problems()).singleElement()
        .satisfies(p -> assertThat(p.kind()).isEqualTo(Problem.Kind.VERBATIM_REFUSED));
  }

  @Test
  void routerIdsCompleteThePlanAndMissingOnesConcernOnlyTheirServices() {
    InstancePlan plan = InstancePlanner.plan(SETTINGS, List.of(ServiceVips.of("shop/a", "198.51.100.1",
        "2001:db8:100::1"), ServiceVips.of("shop/b", "198.51.100.2"), ServiceVips.of("shop/c", "198.51.100.3")),
        NODES);

    InstancePlan.Assembly assembly = plan.withRouterIds(Map.of("shop/a", 1, "shop/c", 1, "shop/b", 0));

    assertThat(assembly.model().instances()).extracting(VrrpInstance::name).containsExactly("shop/a",
        "shop/a/ipv6");
    assertThat(assembly.problems()).extracting(Problem::kind).containsExactlyInAnyOrder(Problem.Kind.NO_ROUTER_ID,
        Problem.Kind.ROUTER_ID_CONFLICT);
  }

  @Test
  void aServiceListedTwiceIsAProgrammingError() {
    assertThatThrownBy(() -> InstancePlanner.plan(SETTINGS, List.of(ServiceVips.of("a/b", "198.51.100.1"),
        ServiceVips.of("a/b", "198.51.100.2")), NODES)).hasMessageContaining("listed twice");
  }

  private static Map<String, String> keysOfVips(InstancePlan plan) {
    Map<String, String> map = new HashMap<>();
    plan.instances().forEach(i -> i.vips().forEach(v -> map.put(v.toString(), i.key())));
    return map;
  }
}
