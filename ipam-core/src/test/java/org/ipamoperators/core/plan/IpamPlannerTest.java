package org.ipamoperators.core.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.ledger.Claim;
import org.ipamoperators.core.ledger.ConflictKind;
import org.ipamoperators.core.placement.Change;
import org.ipamoperators.core.placement.NodeState;
import org.junit.jupiter.api.Test;

class IpamPlannerTest {
  private static final PoolDefinition ZONE_A = new PoolDefinition("zone-a", List.of("192.0.2.0/29"),
      List.of("192.0.2.1"), AllocationStrategy.FIRST_FREE, "a", null);
  private static final PoolDefinition ZONE_B = new PoolDefinition("zone-b", List.of("198.51.100.0/30"),
      List.of(), AllocationStrategy.FIRST_FREE, "b", null);
  private static final List<NodeState> NODES = List.of(
      new NodeState("a1", "a", true, 5, Set.of(Ip.parse("192.0.2.2"))),
      new NodeState("a2", "a", true, 5, Set.of()),
      new NodeState("b1", "b", true, 5, Set.of()));

  @Test
  void keepsWhatIsHeldAllocatesTheRestAndPlacesEverything() {
    PlanResult r = IpamPlanner.plan(new PlanInput(List.of(ZONE_A, ZONE_B), NODES,
        List.of(new Claimant("team-x", List.of("zone-a", "zone-b")), new Claimant("team-y", List.of("zone-a"))),
        List.of(Claim.of(Ip.parse("192.0.2.2"), "team-x")), null));
    assertThat(r.allocations()).extracting(PlanResult.Allocation::claimant, PlanResult.Allocation::address,
        PlanResult.Allocation::kept).containsExactly(
        org.assertj.core.groups.Tuple.tuple("team-x", Ip.parse("192.0.2.2"), true),
        org.assertj.core.groups.Tuple.tuple("team-x", Ip.parse("198.51.100.1"), false),
        org.assertj.core.groups.Tuple.tuple("team-y", Ip.parse("192.0.2.3"), false));
    assertThat(r.placement().assignments().get("a1")).containsExactly(Ip.parse("192.0.2.2"));
    assertThat(r.placement().assignments().get("a2")).containsExactly(Ip.parse("192.0.2.3"));
    assertThat(r.placement().assignments().get("b1")).containsExactly(Ip.parse("198.51.100.1"));
    assertThat(r.placement().changes()).extracting(Change::kind).containsOnly(Change.Kind.PLACE);
    assertThat(r.clean()).isTrue();
  }

  @Test
  void oneBadPoolOrConflictAffectsOnlyTheClaimantsConcerned() {
    PoolDefinition broken = new PoolDefinition("broken", List.of("10.0.0.5/24"), List.of(), null, null, null);
    PlanResult r = IpamPlanner.plan(new PlanInput(List.of(ZONE_A, broken), NODES,
        List.of(new Claimant("good", List.of("zone-a")), new Claimant("bad", List.of("broken")),
            new Claimant("late", List.of("zone-a"))),
        List.of(Claim.of(Ip.parse("192.0.2.4"), "good"), Claim.of(Ip.parse("192.0.2.4"), "late"),
            Claim.of(Ip.parse("192.0.2.6"), "gone")),
        null));
    assertThat(r.invalidPools()).singleElement().satisfies(p ->
        assertThat(p.problems().get(0).message()).contains("did you mean 10.0.0.0/24"));
    assertThat(r.unallocated()).singleElement().satisfies(u -> {
      assertThat(u.claimant()).isEqualTo("bad");
      assertThat(u.reason()).contains("pool broken is invalid");
    });
    assertThat(r.conflicts()).singleElement().satisfies(c -> {
      assertThat(c.conflict().kind()).isEqualTo(ConflictKind.DUPLICATE_CLAIM);
      assertThat(c.conflict().owner()).isEqualTo("late");
    });
    assertThat(r.allocations()).extracting(PlanResult.Allocation::claimant, PlanResult.Allocation::address)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("good", Ip.parse("192.0.2.4")),
            org.assertj.core.groups.Tuple.tuple("late", Ip.parse("192.0.2.2")));
    assertThat(r.released()).singleElement().satisfies(x -> assertThat(x.owner()).isEqualTo("gone"));
  }

  @Test
  void anExhaustedPoolIsReportedPerClaimant() {
    PoolDefinition tiny = new PoolDefinition("tiny", List.of("192.0.2.9"), List.of(), null, null, null);
    PlanResult r = IpamPlanner.plan(new PlanInput(List.of(tiny), NODES,
        List.of(new Claimant("one", List.of("tiny")), new Claimant("two", List.of("tiny"))), List.of(), null));
    assertThat(r.allocations()).hasSize(1);
    assertThat(r.unallocated()).singleElement().satisfies(u -> {
      assertThat(u.claimant()).isEqualTo("two");
      assertThat(u.reason()).contains("exhausted");
    });
  }

  @Test
  void overlappingPoolsAreBothRejected() {
    PoolDefinition other = new PoolDefinition("other", List.of("192.0.2.4/30"), List.of(), null, null, null);
    PlanResult r = IpamPlanner.plan(new PlanInput(List.of(ZONE_A, other), NODES,
        List.of(new Claimant("c", List.of("zone-a"))), List.of(), null));
    assertThat(r.invalidPools()).extracting(PlanResult.InvalidPool::pool).containsExactly("other", "zone-a");
    assertThat(r.invalidPools().get(0).problems().get(0).message()).contains("overlaps pool");
  }
}
