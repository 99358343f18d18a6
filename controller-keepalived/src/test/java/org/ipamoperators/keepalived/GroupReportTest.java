package org.ipamoperators.keepalived;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupStatus;
import org.junit.jupiter.api.Test;

/** What a group says about itself: kept-running status, status patches only on change, when to look again. */
class GroupReportTest {

  private static KeepalivedGroup group(KeepalivedGroupStatus status) {
    KeepalivedGroup g = new KeepalivedGroup();
    g.setMetadata(new ObjectMetaBuilder().withNamespace("ns").withName("g").withGeneration(3L).build());
    g.setStatus(status);
    return g;
  }

  private static RouterIds.Result ids(boolean retiring, String... exhausted) {
    return new RouterIds.Result(new TreeMap<>(Map.of("ns/a", 1)), new TreeSet<>(List.of(exhausted)), List.of(),
        retiring, false);
  }

  @Test
  void aKeptRunningGroupKeepsItsIdsServicesAndCountsAndIsNotReady() {
    KeepalivedGroupStatus old = new KeepalivedGroupStatus(Map.of("ns/a", 7), List.of(), 2L, List.of("ns/a"), 1, 1,
        2, "vrrp-default", List.of("ns/b"), 1);
    KeepalivedGroupStatus s = GroupReport.keptRunning(group(old), "InvalidSpec", "bad");
    assertThat(s.routerIDs()).containsEntry("ns/a", 7);
    assertThat(s.services()).containsExactly("ns/a");
    assertThat(List.of(s.serviceCount(), s.instanceCount(), s.nodeCount())).containsExactly(1, 1, 2);
    assertThat(s.routerIDSpace()).isEqualTo("vrrp-default");
    assertThat(s.refusedServices()).containsExactly("ns/b");
    assertThat(s.refusedServiceCount()).isEqualTo(1);
    assertThat(s.observedGeneration()).isEqualTo(3L);
    assertThat(s.conditions()).singleElement().satisfies(c -> {
      assertThat(c.getType()).isEqualTo(GroupReport.COND_READY);
      assertThat(c.getStatus()).isEqualTo("False");
      assertThat(c.getReason()).isEqualTo("InvalidSpec");
      assertThat(c.getMessage()).isEqualTo("bad");
    });
    assertThat(GroupReport.keptRunning(group(null), "InvalidSpec", "bad").routerIDs()).isEmpty();
  }

  @Test
  void theStatusIsPatchedOnlyWhenItChanged() {
    KeepalivedGroup g = group(null);
    KeepalivedGroupStatus s = GroupReport.keptRunning(g, "InvalidSpec", "bad");
    assertThat(GroupReport.patchIfChanged(g, s).isPatchStatus()).isTrue();
    assertThat(GroupReport.patchIfChanged(group(s), s).isNoUpdate()).isTrue();
    assertThat(GroupReport.condition(group(s), GroupReport.COND_READY)).isEqualTo("False");
    assertThat(GroupReport.condition(group(s), GroupReport.COND_EXHAUSTED)).isNull();
  }

  @Test
  void aGroupIsLookedAtAgainForRetiredIdsAndForInstancesWithoutOne() {
    Duration grace = Duration.ofSeconds(10);
    assertThat(GroupReport.requeue(ids(false), grace)).isEmpty();
    assertThat(GroupReport.requeue(ids(false, "ns/b"), grace)).contains(GroupReport.RETRY_EXHAUSTED);
    assertThat(GroupReport.requeue(ids(true), grace)).contains(Duration.ofSeconds(11));
    assertThat(GroupReport.requeue(ids(true, "ns/b"), grace)).contains(Duration.ofSeconds(11));
    assertThat(GroupReport.requeue(ids(true), Duration.ofMinutes(10))).contains(Duration.ofSeconds(601));
    assertThat(GroupReport.requeue(ids(true, "ns/b"), Duration.ofMinutes(10))).contains(GroupReport.RETRY_EXHAUSTED);
  }

  @Test
  void longListsAreCutInMessages() {
    TreeSet<String> many = new TreeSet<>();
    for (int i = 10; i < 22; i++) {
      many.add("ns/s" + i);
    }
    assertThat(GroupReport.first(many)).startsWith("ns/s10, ns/s11").endsWith("ns/s19, ...");
    assertThat(GroupReport.first(new TreeSet<>(List.of("ns/a")))).isEqualTo("ns/a");
  }

  @Test
  void conditionsAreReadByType() {
    Condition c = new io.fabric8.kubernetes.api.model.ConditionBuilder().withType(GroupReport.COND_SERVICE_PROBLEMS)
        .withStatus("True").build();
    KeepalivedGroupStatus s = new KeepalivedGroupStatus(Map.of(), List.of(c), 1L, List.of(), 0, 0, 0, null,
        List.of(), null);
    assertThat(GroupReport.condition(group(s), GroupReport.COND_SERVICE_PROBLEMS)).isEqualTo("True");
  }

  /** The plan of group ns/g with one node, for these Services and rules, every instance holding an id. */
  private static GroupPlan plan(ServiceSelection services) {
    List<org.ipamoperators.keepalived.config.KeepalivedNode> nodes = List.of(
        org.ipamoperators.keepalived.config.KeepalivedNode.of("n1", "203.0.113.10"));
    var planned = org.ipamoperators.keepalived.config.InstancePlanner.plan(
        org.ipamoperators.keepalived.config.GroupSettings.builder("ns", "g").interfaceName("eth0").build(),
        services.vips(), nodes);
    TreeMap<String, Integer> ids = new TreeMap<>();
    planned.routerIdKeys().forEach(k -> ids.put(k, ids.size() + 1));
    var assembly = planned.withRouterIds(ids);
    return new GroupPlan(nodes, services.withProblems(assembly.problems()), "vrrp-default",
        new RouterIds.Result(ids, new TreeSet<>(), List.of(), false, false), assembly,
        GroupPlan.Rendering.of(assembly.model()), List.of());
  }

  private static io.fabric8.kubernetes.api.model.Service service(String namespace, String name, String... ips) {
    return new io.fabric8.kubernetes.api.model.ServiceBuilder().withNewMetadata().withNamespace(namespace)
        .withName(name).endMetadata().withNewSpec().withType("LoadBalancer").withExternalIPs(ips).endSpec().build();
  }

  @Test
  void refusedServicesAreListedAndCountedAndAGroupWithoutAnyIsNotPatchedAgain() {
    AttachRules rules = AttachRules.parse(List.of("ns"), List.of("192.0.2.0/24", "2001:db8::/64"));
    ServiceSelection refusing = ServiceSelection.of("ns/g", List.of(service("ns", "ok", "192.0.2.1"),
        service("ns", "v6", "2001:db8::1", "2001:db8:1::1"), service("other", "x", "192.0.2.2")), n -> true, rules);
    KeepalivedGroupStatus s = GroupReport.reconciled(group(null), plan(refusing), 9650, false, 0);
    assertThat(s.refusedServices()).containsExactly("ns/v6", "other/x");
    assertThat(s.refusedServiceCount()).isEqualTo(2);
    assertThat(s.services()).containsExactly("ns/ok", "ns/v6", "other/x");
    assertThat(GroupReport.condition(group(s), GroupReport.COND_SERVICE_PROBLEMS)).isEqualTo("True");
    assertThat(s.conditions()).filteredOn(c -> c.getType().equals(GroupReport.COND_SERVICE_PROBLEMS))
        .singleElement().satisfies(c -> assertThat(c.getMessage()).contains("2 refused by the group's namespace"));

    ServiceSelection clean = ServiceSelection.of("ns/g", List.of(service("ns", "ok", "192.0.2.1")), n -> true, rules);
    KeepalivedGroupStatus none = GroupReport.reconciled(group(null), plan(clean), 9650, false, 0);
    assertThat(none.refusedServices()).isNull();
    assertThat(none.refusedServiceCount()).isNull();
    // As the API server gives it back (absent fields stay absent): nothing to patch.
    KeepalivedGroupStatus readBack = io.fabric8.kubernetes.client.utils.Serialization.unmarshal(
        io.fabric8.kubernetes.client.utils.Serialization.asJson(none), KeepalivedGroupStatus.class);
    KeepalivedGroup again = group(readBack);
    assertThat(GroupReport.patchIfChanged(again, GroupReport.reconciled(again, plan(clean), 9650, false, 0))
        .isNoUpdate()).isTrue();
  }
}
