package org.ipamoperators.core.placement;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.Test;

class PlacementPlannerTest {
  private static final Ip A = Ip.parse("192.0.2.1");
  private static final Ip B = Ip.parse("192.0.2.2");
  private static final Ip C = Ip.parse("192.0.2.3");
  private static final Ip D = Ip.parse("192.0.2.4");

  private static NodeState node(String name, String group, int capacity, Ip... ips) {
    return new NodeState(name, group, true, capacity, Set.of(ips));
  }

  @Test
  void newAddressesGoToTheLeastLoadedNodeTiesByName() {
    PlacementPlan p = PlacementPlanner.plan(
        List.of(node("n2", "a", 4), node("n1", "a", 4), node("n3", "a", 2, A)),
        List.of(new IpDemand(A, "a", "x"), new IpDemand(B, "a", "y"), new IpDemand(C, "a", "z")),
        PlacementOptions.DEFAULT);
    assertThat(p.assignments().get("n3")).containsExactly(A);
    assertThat(p.assignments().get("n1")).containsExactly(B);
    assertThat(p.assignments().get("n2")).containsExactly(C);
    assertThat(p.changes()).extracting(Change::kind).containsOnly(Change.Kind.PLACE);
  }

  @Test
  void ratioNotCountDecides() {
    // n1 hosts 2 of 10 (0.2), n2 hosts 1 of 2 (0.5): the next address goes to n1
    PlacementPlan p = PlacementPlanner.plan(
        List.of(node("n1", "a", 10, A, B), node("n2", "a", 2, C)),
        List.of(new IpDemand(A, "a", "x"), new IpDemand(B, "a", "x2"), new IpDemand(C, "a", "x3"),
            new IpDemand(D, "a", "x4")),
        PlacementOptions.DEFAULT);
    assertThat(p.assignments().get("n1")).contains(D);
  }

  @Test
  void anOwnersAddressesPreferDistinctNodes() {
    PlacementPlan p = PlacementPlanner.plan(
        List.of(node("n1", "a", 10), node("n2", "a", 10, C, D)),
        List.of(new IpDemand(A, "a", "ns"), new IpDemand(B, "a", "ns"),
            new IpDemand(C, "a", "o1"), new IpDemand(D, "a", "o2")),
        PlacementOptions.DEFAULT);
    // A goes to the idle n1; B would too by load, but ns is already there, so n2 takes it
    assertThat(p.assignments().get("n1")).containsExactly(A);
    assertThat(p.assignments().get("n2")).containsExactly(B, C, D);
  }

  @Test
  void addressesOnAFailedNodeMoveInTheirGroupAndStayWhenNoNodeCanTakeThem() {
    NodeState failed = new NodeState("n1", "a", false, 10, Set.of(A, B));
    PlacementPlan p = PlacementPlanner.plan(
        List.of(failed, node("n2", "a", 1), node("n3", "b", 5)),
        List.of(new IpDemand(A, "a", "x"), new IpDemand(B, "a", "y")),
        PlacementOptions.DEFAULT);
    assertThat(p.changes(Change.Kind.MOVE)).singleElement().satisfies(c -> {
      assertThat(c.address()).isEqualTo(A);
      assertThat(c.to()).isEqualTo("n2");
      assertThat(c.reason()).contains("n1 is not eligible");
    });
    assertThat(p.unplaceable()).singleElement().satisfies(u -> {
      assertThat(u.address()).isEqualTo(B);
      assertThat(u.reason()).isEqualTo(UnplaceableReason.ALL_NODES_AT_CAPACITY);
      assertThat(u.message()).contains("all 1 eligible nodes in group a are at capacity")
          .contains("stays on n1");
    });
    assertThat(p.assignments().get("n1")).containsExactly(B);
  }

  @Test
  void noEligibleNodeInGroupIsReported() {
    PlacementPlan p = PlacementPlanner.plan(List.of(node("n1", "a", 5)),
        List.of(new IpDemand(A, "zone-z", "ns")), PlacementOptions.DEFAULT);
    assertThat(p.unplaceable()).singleElement().satisfies(u -> {
      assertThat(u.reason()).isEqualTo(UnplaceableReason.NO_ELIGIBLE_NODE_IN_GROUP);
      assertThat(u.message()).contains("no eligible node in group zone-z");
    });
  }

  @Test
  void overCapacityNodesShedTheirHighestAddresses() {
    PlacementPlan p = PlacementPlanner.plan(
        List.of(node("n1", "a", 1, A, B), node("n2", "a", 5)),
        List.of(new IpDemand(A, "a", "x"), new IpDemand(B, "a", "y")), PlacementOptions.DEFAULT);
    assertThat(p.assignments().get("n1")).containsExactly(A);
    assertThat(p.changes()).singleElement().satisfies(c -> {
      assertThat(c.kind()).isEqualTo(Change.Kind.MOVE);
      assertThat(c.reason()).contains("over its capacity of 1");
    });
  }

  @Test
  void unwantedAndDuplicatedAddressesAreRemoved() {
    PlacementPlan p = PlacementPlanner.plan(
        List.of(node("n1", "a", 5, A, C), node("n2", "a", 5, A)),
        List.of(new IpDemand(A, "a", "x")), PlacementOptions.DEFAULT);
    assertThat(p.changes()).extracting(Change::kind, Change::address, Change::from).containsExactly(
        org.assertj.core.groups.Tuple.tuple(Change.Kind.REMOVE, A, "n2"),
        org.assertj.core.groups.Tuple.tuple(Change.Kind.REMOVE, C, "n1"));
  }

  @Test
  void rebalanceMovesFromBusiestToIdlestWithinItsBound() {
    Ip[] ips = new Ip[6];
    List<IpDemand> demands = new java.util.ArrayList<>();
    for (int i = 0; i < 6; i++) {
      ips[i] = Ip.v4(0xC0000210L + i);
      demands.add(new IpDemand(ips[i], "a", "ns-" + i));
    }
    List<NodeState> nodes = List.of(node("n1", "a", 10, ips), node("n2", "a", 10), node("n3", "a", 10));
    assertThat(PlacementPlanner.plan(nodes, demands, PlacementOptions.DEFAULT).changes()).isEmpty();
    PlacementPlan all = PlacementPlanner.plan(nodes, demands, PlacementOptions.rebalance(10));
    assertThat(all.assignments().values()).allSatisfy(s -> assertThat(s).hasSize(2));
    assertThat(all.changes()).hasSize(4);
    PlacementPlan one = PlacementPlanner.plan(nodes, demands, PlacementOptions.rebalance(1));
    assertThat(one.changes()).hasSize(1);
  }

  @Test
  void headroomTellsWhetherAGroupSurvivesLosingItsBusiestNode() {
    PlacementPlan p = PlacementPlanner.plan(
        List.of(node("n1", "a", 2, A, B), node("n2", "a", 2, C), node("n3", "b", NodeState.UNLIMITED, D),
            node("n4", "b", NodeState.UNLIMITED)),
        List.of(new IpDemand(A, "a", "1"), new IpDemand(B, "a", "2"), new IpDemand(C, "a", "3"),
            new IpDemand(D, "b", "4")),
        PlacementOptions.DEFAULT);
    assertThat(p.headroom()).hasSize(2);
    GroupHeadroom a = p.headroom().get(0);
    assertThat(a.group()).isEqualTo("a");
    assertThat(a.busiestNode()).isEqualTo("n1");
    assertThat(a.spareElsewhere()).isEqualTo(1);
    assertThat(a.survivesLossOfBusiestNode()).isFalse();
    GroupHeadroom b = p.headroom().get(1);
    assertThat(b.spareElsewhere()).isEqualTo(-1);
    assertThat(b.survivesLossOfBusiestNode()).isTrue();
  }
}
