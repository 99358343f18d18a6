package org.ipamoperators.core.placement;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.ipamoperators.core.address.Ip;

/** A random planner input made from a seed, so that a failing case can be replayed from its seed. */
record Scenario(long seed, List<NodeState> nodes, List<IpDemand> demands) {
  private static final String[] GROUPS = {"zone-a", "zone-b", "zone-c"};

  static Scenario random(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int nodeCount = 1 + r.nextInt(25);
    int addressSpace = 10 + r.nextInt(150);
    List<IpDemand> demands = new ArrayList<>();
    int demandCount = r.nextInt(addressSpace);
    Set<Integer> used = new HashSet<>();
    for (int i = 0; i < demandCount; i++) {
      int a = r.nextInt(addressSpace);
      if (!used.add(a)) {
        continue;
      }
      String group = r.nextInt(6) == 0 ? null : GROUPS[r.nextInt(GROUPS.length)];
      demands.add(new IpDemand(ip(a), group, "ns-" + r.nextInt(1 + demandCount / 2)));
    }
    List<NodeState> nodes = new ArrayList<>();
    for (int i = 0; i < nodeCount; i++) {
      String group = r.nextInt(8) == 0 ? null : GROUPS[r.nextInt(GROUPS.length)];
      int capacity = r.nextInt(5) == 0 ? NodeState.UNLIMITED : r.nextInt(12);
      Set<Ip> assigned = new HashSet<>();
      int have = r.nextInt(8);
      for (int k = 0; k < have; k++) {
        assigned.add(ip(r.nextInt(addressSpace + 5))); // a few are no longer wanted
      }
      nodes.add(new NodeState("node-" + i, group, r.nextInt(5) != 0, capacity, assigned));
    }
    return new Scenario(seed, nodes, demands);
  }

  static Ip ip(int i) {
    return Ip.v4(0xC0000200L + i); // 192.0.2.0 + i, as data only
  }

  Scenario shuffled(long shuffleSeed) {
    List<NodeState> n = new ArrayList<>(nodes);
    List<IpDemand> d = new ArrayList<>(demands);
    Collections.shuffle(n, new java.util.Random(shuffleSeed));
    Collections.shuffle(d, new java.util.Random(shuffleSeed + 1));
    return new Scenario(seed, n, d);
  }
}
