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
}
