package org.ipamoperators.core.placement;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.Test;

/** A demand without a group may go to any node; its messages read as such. */
class UnplaceableMessageTest {
  private static final Ip A = Ip.parse("192.0.2.1");

  @Test
  void noEligibleNodeAnywhereIsSaidPlainly() {
    PlacementPlan p = PlacementPlanner.plan(List.of(new NodeState("n1", null, false, 5, Set.of())),
        List.of(new IpDemand(A, null, "ns")), PlacementOptions.DEFAULT);
    assertThat(p.unplaceable()).singleElement().satisfies(u -> assertThat(u.message())
        .isEqualTo("192.0.2.1 of ns cannot be placed: no node is eligible").doesNotContain("in any node"));
  }

  @Test
  void fullNodesWithoutAGroupAreSaidPlainly() {
    PlacementPlan p = PlacementPlanner.plan(List.of(new NodeState("n1", null, true, 0, Set.of())),
        List.of(new IpDemand(A, null, "ns")), PlacementOptions.DEFAULT);
    assertThat(p.unplaceable()).singleElement().satisfies(u -> assertThat(u.message())
        .contains("all 1 eligible nodes are at capacity").doesNotContain("any node"));
  }
}
