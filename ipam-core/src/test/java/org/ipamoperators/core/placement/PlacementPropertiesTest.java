package org.ipamoperators.core.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.Test;

/**
 * Planner properties over random scenarios (QuickTheories draws the seed; a failure names it, and
 * {@code Scenario.random(seed)} replays it).
 */
class PlacementPropertiesTest {

  private static PlacementPlan plan(Scenario s, PlacementOptions o) {
    return PlacementPlanner.plan(s.nodes(), s.demands(), o);
  }

  @Test
  void neverExceedsCapacity() {
    qt().withExamples(400).forAll(longs().all()).checkAssert(seed -> {
      Scenario s = Scenario.random(seed);
      for (PlacementOptions o : new PlacementOptions[] {PlacementOptions.DEFAULT, PlacementOptions.rebalance(50)}) {
        PlacementPlan p = plan(s, o);
        for (NodeState n : s.nodes()) {
          assertThat(p.assignments().get(n.name()).size()).as("seed %d node %s", seed, n.name())
              .isLessThanOrEqualTo(n.capacity());
        }
      }
    });
  }

  @Test
  void isDeterministicWhateverTheInputOrder() {
    qt().withExamples(300).forAll(longs().all()).checkAssert(seed -> {
      Scenario s = Scenario.random(seed);
      PlacementPlan a = plan(s, PlacementOptions.rebalance(5));
      PlacementPlan b = plan(s.shuffled(seed), PlacementOptions.rebalance(5));
      assertThat(b).as("seed %d", seed).isEqualTo(a);
    });
  }

  @Test
  void neverMovesAHealthyPlacement() {
    qt().withExamples(400).forAll(longs().all()).checkAssert(seed -> {
      Scenario s = Scenario.random(seed);
      Map<Ip, IpDemand> wanted = new HashMap<>();
      s.demands().forEach(d -> wanted.put(d.address(), d));
      PlacementPlan p = plan(s, PlacementOptions.DEFAULT);
      for (NodeState n : s.nodes()) {
        long keepable = n.assigned().stream().filter(ip -> healthyOn(n, wanted.get(ip))).count();
        if (keepable > n.capacity()) {
          continue; // over capacity: some must move
        }
        for (Ip ip : n.assigned()) {
          if (healthyOn(n, wanted.get(ip)) && firstHealthyHolder(s, ip, wanted.get(ip)).equals(n.name())) {
            assertThat(p.assignments().get(n.name())).as("seed %d: %s stays on %s", seed, ip, n.name())
                .contains(ip);
          }
        }
      }
    });
  }

  private static boolean healthyOn(NodeState n, IpDemand d) {
    return d != null && n.eligible() && (d.group() == null || d.group().equals(n.group()));
  }

  private static String firstHealthyHolder(Scenario s, Ip ip, IpDemand d) {
    return s.nodes().stream().filter(n -> n.assigned().contains(ip) && healthyOn(n, d))
        .map(NodeState::name).sorted().findFirst().orElseThrow();
  }

  @Test
  void placesEverythingPlaceableAndEachAddressOnce() {
    qt().withExamples(400).forAll(longs().all()).checkAssert(seed -> {
      Scenario s = Scenario.random(seed);
      PlacementPlan p = plan(s, PlacementOptions.DEFAULT);
      Map<Ip, String> hostOf = new HashMap<>();
      p.assignments().forEach((node, ips) -> ips.forEach(ip ->
          assertThat(hostOf.put(ip, node)).as("seed %d: %s hosted twice", seed, ip).isNull()));
      Set<Ip> unplaced = new HashSet<>();
      Map<String, NodeState> nodes = new HashMap<>();
      s.nodes().forEach(n -> nodes.put(n.name(), n));
      for (Unplaceable u : p.unplaceable()) {
        unplaced.add(u.address());
        for (NodeState n : s.nodes()) {
          boolean inGroup = n.eligible() && (u.group() == null || u.group().equals(n.group()));
          if (u.reason() == UnplaceableReason.NO_ELIGIBLE_NODE_IN_GROUP) {
            assertThat(inGroup).as("seed %d: %s has an eligible node %s", seed, u.address(), n.name()).isFalse();
          } else if (u.reason() == UnplaceableReason.ALL_NODES_AT_CAPACITY && inGroup) {
            assertThat(p.assignments().get(n.name()).size()).as("seed %d: %s could go to %s", seed,
                u.address(), n.name()).isEqualTo(n.capacity());
          }
        }
      }
      for (IpDemand d : s.demands()) {
        String host = hostOf.get(d.address());
        if (unplaced.contains(d.address())) {
          // left on an ineligible node at most
          if (host != null) {
            assertThat(nodes.get(host).assigned()).contains(d.address());
          }
          continue;
        }
        assertThat(host).as("seed %d: %s placed", seed, d.address()).isNotNull();
        NodeState n = nodes.get(host);
        assertThat(n.eligible()).isTrue();
        assertThat(d.group() == null || d.group().equals(n.group())).as("seed %d group", seed).isTrue();
      }
      Set<Ip> wanted = new HashSet<>();
      s.demands().forEach(d -> wanted.add(d.address()));
      assertThat(wanted).containsAll(hostOf.keySet());
    });
  }

  @Test
  void changesLeadFromTodayToThePlan() {
    qt().withExamples(300).forAll(longs().all()).checkAssert(seed -> {
      Scenario s = Scenario.random(seed);
      PlacementPlan p = plan(s, PlacementOptions.rebalance(3));
      TreeMap<String, SortedSet<Ip>> state = new TreeMap<>();
      s.nodes().forEach(n -> state.put(n.name(), new TreeSet<>(n.assigned())));
      for (Change c : p.changes()) {
        if (c.from() != null) {
          assertThat(state.get(c.from()).remove(c.address())).as("seed %d: %s", seed, c).isTrue();
        }
        if (c.to() != null) {
          assertThat(state.get(c.to()).add(c.address())).as("seed %d: %s", seed, c).isTrue();
        }
      }
      assertThat(state).as("seed %d", seed).isEqualTo(p.assignments());
    });
  }

  @Test
  void rebalanceIsBounded() {
    qt().withExamples(200).forAll(longs().all()).checkAssert(seed -> {
      Scenario s = Scenario.random(seed);
      int base = plan(s, PlacementOptions.DEFAULT).changes().size();
      PlacementPlan p = plan(s, PlacementOptions.rebalance(2));
      long rebalanceMoves = p.changes().stream().filter(c -> c.reason().startsWith("rebalance")).count();
      assertThat(rebalanceMoves).as("seed %d", seed).isLessThanOrEqualTo(2);
      assertThat(p.changes().size()).isLessThanOrEqualTo(base + 2);
    });
  }
}
