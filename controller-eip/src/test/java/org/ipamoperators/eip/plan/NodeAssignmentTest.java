package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.ipamoperators.core.failover.NodeCondition;
import org.junit.jupiter.api.Test;

class NodeAssignmentTest {
  private static final Map<String, String> EGRESS = Map.of("role", "egress");

  private static NodeCandidate node(String name, NodeCondition c) {
    return new NodeCandidate(name, Map.of("role", "egress"), c, false, true);
  }

  @Test
  void oneEipTwoReadyNodesTheFirstByNameHoldsItAndBothGetReadyStatus() {
    NodeAssignment a = NodeAssignment.plan(List.of(new NodeEip("egress/e1", EGRESS, null)),
        List.of(node("n2", NodeCondition.HEALTHY), node("n1", NodeCondition.HEALTHY)));
    assertThat(a.holder("egress/e1")).contains("n1");
    assertThat(a.readyStatus()).containsExactlyInAnyOrderEntriesOf(Map.of("n1", true, "n2", false));
  }

  @Test
  void aHealthyOrSuspectHolderKeepsItsEipAFailedOneLosesItToAHealthyNode() {
    List<NodeCandidate> nodes = List.of(node("n1", NodeCondition.HEALTHY), node("n2", NodeCondition.SUSPECT));
    assertThat(NodeAssignment.plan(List.of(new NodeEip("ns/e", EGRESS, "n2")), nodes).holder("ns/e")).contains("n2");
    nodes = List.of(node("n1", NodeCondition.HEALTHY), node("n2", NodeCondition.FAILED));
    NodeAssignment a = NodeAssignment.plan(List.of(new NodeEip("ns/e", EGRESS, "n2")), nodes);
    assertThat(a.holder("ns/e")).contains("n1");
    assertThat(a.readyStatus()).containsEntry("n2", false).containsEntry("n1", true);
  }

  @Test
  void aRecoveringNodeNeitherKeepsNorTakesATerminatingOrUnreachableNodeNeither() {
    List<NodeCandidate> nodes = List.of(node("n1", NodeCondition.RECOVERING),
        new NodeCandidate("n2", EGRESS, NodeCondition.HEALTHY, true, true),
        new NodeCandidate("n3", EGRESS, NodeCondition.HEALTHY, false, false));
    NodeAssignment a = NodeAssignment.plan(List.of(new NodeEip("ns/e", EGRESS, null)), nodes);
    assertThat(a.holder("ns/e")).isEmpty();
    assertThat(a.unassigned().get("ns/e")).contains("none of the 3 matching nodes is Ready");
    // A terminating or unreachable holder loses it even though nobody may take it.
    for (String holder : List.of("n2", "n3")) {
      a = NodeAssignment.plan(List.of(new NodeEip("ns/e", EGRESS, holder)), nodes);
      assertThat(a.holder("ns/e")).as(holder).isEmpty();
      assertThat(a.kept()).isEmpty();
    }
  }

  @Test
  void aFailedHolderNobodyElseMayTakeKeepsItsEipInPlaceAndSaysWhy() {
    for (NodeCondition c : List.of(NodeCondition.FAILED, NodeCondition.RECOVERING)) {
      // After a control-plane outage: every matching node failed.
      List<NodeCandidate> nodes = List.of(node("n1", c), node("n2", NodeCondition.FAILED));
      NodeAssignment a = NodeAssignment.plan(List.of(new NodeEip("ns/e", EGRESS, "n1")), nodes);
      assertThat(a.holder("ns/e")).as(c.name()).contains("n1");
      assertThat(a.kept().get("ns/e")).contains("node n1 holds it but is " + c.name().toLowerCase(),
          "none of the 2 matching nodes is Ready");
      assertThat(a.unassigned()).isEmpty();
      assertThat(a.readyStatus()).containsExactlyInAnyOrderEntriesOf(Map.of("n1", true, "n2", false));
    }
    // As soon as a healthy node may take it, it moves there.
    NodeAssignment a = NodeAssignment.plan(List.of(new NodeEip("ns/e", EGRESS, "n1")),
        List.of(node("n1", NodeCondition.FAILED), node("n2", NodeCondition.HEALTHY)));
    assertThat(a.holder("ns/e")).contains("n2");
    assertThat(a.kept()).isEmpty();
    // A holder that no longer matches the selector is not kept.
    a = NodeAssignment.plan(List.of(new NodeEip("ns/e", Map.of("role", "other"), "n1")),
        List.of(node("n1", NodeCondition.FAILED)));
    assertThat(a.holder("ns/e")).isEmpty();
  }

  @Test
  void aNodeHoldsAtMostOneEipAndExtraEipsSayWhy() {
    List<NodeEip> eips = List.of(new NodeEip("ns/a", EGRESS, null), new NodeEip("ns/b", EGRESS, null),
        new NodeEip("ns/c", EGRESS, null));
    NodeAssignment a = NodeAssignment.plan(eips, List.of(node("n1", NodeCondition.HEALTHY),
        node("n2", NodeCondition.HEALTHY)));
    assertThat(a.holders()).containsExactlyInAnyOrderEntriesOf(Map.of("ns/a", "n1", "ns/b", "n2"));
    assertThat(a.unassigned().get("ns/c")).isEqualTo("all 2 Ready matching nodes hold another Eip");
  }

  @Test
  void keptHoldersAreNotDisplacedByEipsSortedBeforeThem() {
    List<NodeEip> eips = List.of(new NodeEip("ns/a", EGRESS, null), new NodeEip("ns/b", EGRESS, "n1"));
    NodeAssignment a = NodeAssignment.plan(eips, List.of(node("n1", NodeCondition.HEALTHY),
        node("n2", NodeCondition.HEALTHY)));
    assertThat(a.holders()).containsExactlyInAnyOrderEntriesOf(Map.of("ns/a", "n2", "ns/b", "n1"));
  }

  @Test
  void twoEipsClaimingOneHolderOnlyTheFirstKeepsIt() {
    List<NodeEip> eips = List.of(new NodeEip("ns/a", EGRESS, "n1"), new NodeEip("ns/b", EGRESS, "n1"));
    NodeAssignment a = NodeAssignment.plan(eips, List.of(node("n1", NodeCondition.HEALTHY),
        node("n2", NodeCondition.HEALTHY)));
    assertThat(a.holders()).containsExactlyInAnyOrderEntriesOf(Map.of("ns/a", "n1", "ns/b", "n2"));
  }

  @Test
  void anEmptySelectorMatchesNothingAndNodesOfOtherSelectorsAreNotLabelled() {
    List<NodeCandidate> nodes = List.of(node("n1", NodeCondition.HEALTHY),
        new NodeCandidate("other", Map.of("role", "web"), NodeCondition.HEALTHY, false, true));
    NodeAssignment a = NodeAssignment.plan(List.of(new NodeEip("ns/e", Map.of(), null),
        new NodeEip("ns/f", EGRESS, null)), nodes);
    assertThat(a.holder("ns/e")).isEmpty();
    assertThat(a.unassigned().get("ns/e")).startsWith("no node labelled");
    assertThat(a.readyStatus()).containsOnlyKeys("n1");
  }

  /** Seeded random states: the same input in any order gives the same plan; no node holds two, holders match. */
  @Test
  void deterministicWhateverTheInputOrderAndNeverTwoEipsOnOneNode() {
    for (long seed = 1; seed <= 200; seed++) {
      Random r = new Random(seed);
      List<NodeCandidate> nodes = new ArrayList<>();
      for (int i = 0; i < 1 + r.nextInt(6); i++) {
        nodes.add(new NodeCandidate("n" + i, Map.of("role", r.nextBoolean() ? "egress" : "web"),
            NodeCondition.values()[r.nextInt(4)], r.nextInt(8) == 0, r.nextInt(8) != 0, r.nextInt(4) != 0));
      }
      List<NodeEip> eips = new ArrayList<>();
      for (int i = 0; i < 1 + r.nextInt(5); i++) {
        eips.add(new NodeEip("ns/e" + i, Map.of("role", r.nextBoolean() ? "egress" : "web"),
            r.nextBoolean() ? "n" + r.nextInt(7) : null, r.nextInt(4) != 0));
      }
      NodeAssignment a = NodeAssignment.plan(eips, nodes);
      List<NodeCandidate> n2 = new ArrayList<>(nodes);
      List<NodeEip> e2 = new ArrayList<>(eips);
      Collections.shuffle(n2, r);
      Collections.shuffle(e2, r);
      assertThat(NodeAssignment.plan(e2, n2)).as("seed %d", seed).isEqualTo(a);
      assertThat(a.holders().values()).as("seed %d", seed).doesNotHaveDuplicates();
      for (var h : a.holders().entrySet()) {
        NodeEip e = eips.stream().filter(x -> x.key().equals(h.getKey())).findFirst().orElseThrow();
        NodeCandidate n = nodes.stream().filter(x -> x.name().equals(h.getValue())).findFirst().orElseThrow();
        assertThat(n.matches(e.selector())).as("seed %d", seed).isTrue();
        boolean allowed = a.kept().containsKey(h.getKey()) ? h.getValue().equals(e.holder()) && n.mayStay()
            : h.getValue().equals(e.holder()) ? n.mayKeep() : n.mayTake();
        assertThat(allowed).as("seed %d", seed).isTrue();
      }
      long refused = eips.stream().filter(e -> !e.allowed()).count();
      assertThat(a.holders().size() + a.unassigned().size() + refused).as("seed %d", seed).isEqualTo(eips.size());
      // A refused Eip gets no node but the one it held; nobody else is given that node.
      for (var f : a.frozen().entrySet()) {
        NodeEip e = eips.stream().filter(x -> x.key().equals(f.getKey())).findFirst().orElseThrow();
        assertThat(e.allowed()).as("seed %d", seed).isFalse();
        assertThat(f.getValue()).as("seed %d", seed).isEqualTo(e.holder());
        assertThat(a.holders()).as("seed %d", seed).doesNotContainValue(f.getValue());
      }
      // Kept in place only when no node may take it.
      for (String k : a.kept().keySet()) {
        NodeEip e = eips.stream().filter(x -> x.key().equals(k)).findFirst().orElseThrow();
        assertThat(nodes.stream().filter(n -> n.matches(e.selector()) && n.mayTake()
            && !a.holders().containsValue(n.name()))).as("seed %d", seed).isEmpty();
      }
    }
  }

  @Test
  void nodesOutsideTheBoundNeverHoldAnEipAndAnEipMatchingOnlySuchNodesSaysSo() {
    NodeCandidate outside = new NodeCandidate("n1", EGRESS, NodeCondition.HEALTHY, false, true, false);
    NodeCandidate inside = new NodeCandidate("n2", EGRESS, NodeCondition.HEALTHY, false, true, true);
    // n1 is first by name and held the Eip before the bound was set: it moves to n2.
    NodeAssignment a = NodeAssignment.plan(List.of(new NodeEip("ns/e", EGRESS, "n1")), List.of(outside, inside),
        "tier=edge");
    assertThat(a.holder("ns/e")).contains("n2");
    assertThat(a.readyStatus()).containsExactlyInAnyOrderEntriesOf(Map.of("n1", false, "n2", true));

    a = NodeAssignment.plan(List.of(new NodeEip("ns/e", EGRESS, "n1")), List.of(outside), "tier=edge");
    assertThat(a.holder("ns/e")).isEmpty();
    assertThat(a.kept()).isEmpty();
    assertThat(a.outsideBound()).containsExactly("ns/e");
    assertThat(a.unassigned().get("ns/e")).contains("the 1 nodes matching {role=egress} are all outside", "tier=edge");
    assertThat(a.readyStatus()).containsExactly(Map.entry("n1", false));
  }

  @Test
  void anEipWhoseNamespaceMayNotUseNodeModeGetsNoNodeButKeepsTheOneItHeldFromEveryoneElse() {
    List<NodeCandidate> nodes = List.of(node("n1", NodeCondition.HEALTHY), node("n2", NodeCondition.HEALTHY));
    NodeAssignment a = NodeAssignment.plan(List.of(new NodeEip("team-b/e", EGRESS, null, false),
        new NodeEip("edge/gw", EGRESS, null)), nodes);
    assertThat(a.holder("team-b/e")).isEmpty();
    assertThat(a.unassigned()).doesNotContainKey("team-b/e");
    assertThat(a.frozen()).isEmpty();
    assertThat(a.holder("edge/gw")).contains("n1");

    // team-b/e held n1 before the limit was set: n1 stays its own, edge/gw goes to n2.
    a = NodeAssignment.plan(List.of(new NodeEip("team-b/e", EGRESS, "n1", false),
        new NodeEip("edge/gw", EGRESS, null)), nodes);
    assertThat(a.frozen()).containsExactly(Map.entry("team-b/e", "n1"));
    assertThat(a.holder("edge/gw")).contains("n2");
    assertThat(a.readyStatus()).containsExactlyInAnyOrderEntriesOf(Map.of("n1", true, "n2", true));
  }
}
