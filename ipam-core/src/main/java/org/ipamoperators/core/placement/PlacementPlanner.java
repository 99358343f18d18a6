package org.ipamoperators.core.placement;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;

/**
 * Decides which node hosts each address. A pure function of its inputs, so the same cluster state
 * always gives the same plan. The rules, in order:
 * <ol>
 *   <li>an address on an eligible node of its group stays there (no churn); a copy on a second
 *       node is removed;</li>
 *   <li>addresses on ineligible nodes, on nodes of the wrong group, or beyond a node's capacity
 *       (the highest addresses first) must move;</li>
 *   <li>each address to place goes to the eligible node of its group with the lowest
 *       hosted/capacity ratio, ties by node name, preferring nodes that host none of the same
 *       owner's addresses; capacity is never exceeded;</li>
 *   <li>with rebalancing on, up to {@code maxMoves} addresses move from the busiest to the least
 *       busy node of a group while that narrows the gap.</li>
 * </ol>
 * An address that cannot be placed is reported with its reason; when it sits on an ineligible node
 * it is left there, since taking it away would help nobody.
 */
public final class PlacementPlanner {
  private PlacementPlanner() {}

  private static final class Slot {
    final NodeState node;
    final TreeSet<Ip> hosting = new TreeSet<>();

    Slot(NodeState node) {
      this.node = node;
    }

    String name() {
      return node.name();
    }

    boolean hasRoom() {
      return hosting.size() < node.capacity();
    }

    boolean accepts(IpDemand d) {
      return node.eligible() && (d.group() == null || d.group().equals(node.group()));
    }
  }

  /** Least loaded first: hosted/capacity compared by cross-multiplication, then name. */
  private static final Comparator<Slot> BY_LOAD = (a, b) -> {
    int capA = a.node.capacity();
    int capB = b.node.capacity();
    int c;
    if (capA == 0 || capB == 0) {
      c = Boolean.compare(capA == 0, capB == 0); // a node that can host nothing is always fullest
    } else {
      c = Long.compare((long) a.hosting.size() * capB, (long) b.hosting.size() * capA);
    }
    return c != 0 ? c : a.name().compareTo(b.name());
  };

  private static final String ANY = "";

  /**
   * Places the demanded addresses on the nodes.
   *
   * @param nodes every node with its group, eligibility, capacity and addresses today
   * @param demands the addresses to host
   * @param options rebalancing
   * @return the assignments, the changes, what cannot be placed and the headroom
   */
  public static PlacementPlan plan(Collection<NodeState> nodes, Collection<IpDemand> demands,
      PlacementOptions options) {
    Pass pass = new Pass(nodes, demands);
    pass.keepHolders();
    pass.evictOverCapacity();
    pass.index();
    pass.placePending();
    if (options.rebalance()) {
      rebalance(pass.byGroup, pass.wanted, pass.target, pass.whyMove, options.maxMoves());
    }
    return pass.result();
  }

  /** What one {@link #plan} call knows, filled step by step. */
  private static final class Pass {
    final TreeMap<String, Slot> slots = new TreeMap<>();
    final List<Unplaceable> unplaceable = new ArrayList<>();
    final Map<Ip, IpDemand> wanted;
    /** Who hosts each address today. */
    final Map<Ip, List<Slot>> holders = new HashMap<>();
    /** The node an address that moves comes from. */
    final Map<Ip, Slot> origin = new HashMap<>();
    final Map<Ip, String> whyMove = new HashMap<>();
    final Set<Ip> overCapacity = new HashSet<>();
    /** Eligible nodes by group, least loaded first. */
    final Map<String, TreeSet<Slot>> byGroup = new HashMap<>();
    final Map<String, Integer> eligibleInGroup = new HashMap<>();
    /** The nodes each owner's addresses use. */
    final Map<String, List<String>> ownerNodes = new HashMap<>();
    final Map<Ip, Slot> target = new HashMap<>();

    Pass(Collection<NodeState> nodes, Collection<IpDemand> demands) {
      for (NodeState n : nodes) {
        if (slots.put(n.name(), new Slot(n)) != null) {
          throw new IllegalArgumentException("node " + n.name() + " is listed twice");
        }
      }
      wanted = uniqueDemands(demands, unplaceable);
      for (Slot s : slots.values()) {
        for (Ip ip : s.node.assigned()) {
          holders.computeIfAbsent(ip, k -> new ArrayList<>()).add(s);
        }
      }
    }

    /** 1. An address wanted stays on the first eligible holder of the right group. */
    void keepHolders() {
      for (Map.Entry<Ip, List<Slot>> e : holders.entrySet()) {
        Ip ip = e.getKey();
        IpDemand d = wanted.get(ip);
        if (d == null) {
          continue;
        }
        Slot keeper = e.getValue().stream().filter(s -> s.accepts(d)).findFirst().orElse(null);
        Slot from = keeper != null ? keeper : e.getValue().get(0);
        origin.put(ip, from);
        if (keeper != null) {
          keeper.hosting.add(ip);
        } else {
          whyMove.put(ip, from.node.eligible() ? "node " + from.name() + " is not in group "
              + d.group() : "node " + from.name() + " is not eligible");
        }
      }
    }

    /** 2. Capacity is never exceeded: the highest addresses of an over-full node must move. */
    void evictOverCapacity() {
      for (Slot s : slots.values()) {
        while (s.hosting.size() > s.node.capacity()) {
          Ip ip = s.hosting.pollLast();
          overCapacity.add(ip);
          whyMove.put(ip, "node " + s.name() + " is over its capacity of " + s.node.capacity());
        }
      }
    }

    /** 3. Eligible nodes by group, least loaded first, and owners by the nodes they use. */
    void index() {
      for (Slot s : slots.values()) {
        if (s.node.eligible()) {
          for (String key : keysOf(s)) {
            byGroup.computeIfAbsent(key, k -> new TreeSet<>(BY_LOAD)).add(s);
            eligibleInGroup.merge(key, 1, Integer::sum);
          }
        }
      }
      for (Slot s : slots.values()) {
        for (Ip ip : s.hosting) {
          target.put(ip, s);
          ownerNodes.computeIfAbsent(wanted.get(ip).owner(), k -> new ArrayList<>()).add(s.name());
        }
      }
    }

    /** 4. Everything not kept, in a fixed order (group, then address). */
    void placePending() {
      List<IpDemand> pending = new ArrayList<>();
      for (IpDemand d : wanted.values()) {
        if (!target.containsKey(d.address())) {
          pending.add(d);
        }
      }
      pending.sort(Comparator.comparing((IpDemand d) -> d.group() == null ? ANY : d.group())
          .thenComparing(IpDemand::address));
      pending.forEach(this::place);
    }

    private void place(IpDemand d) {
      String key = d.group() == null ? ANY : d.group();
      TreeSet<Slot> candidates = byGroup.get(key);
      Slot chosen = candidates == null ? null : choose(candidates, ownerNodes.get(d.owner()));
      if (chosen == null) {
        notPlaced(d, key, candidates == null
            ? UnplaceableReason.NO_ELIGIBLE_NODE_IN_GROUP : UnplaceableReason.ALL_NODES_AT_CAPACITY);
        return;
      }
      host(chosen, d, byGroup);
      target.put(d.address(), chosen);
      ownerNodes.computeIfAbsent(d.owner(), k -> new ArrayList<>()).add(chosen.name());
    }

    /** Reported with its reason; left where it is when its node has room, since moving it nowhere helps nobody. */
    private void notPlaced(IpDemand d, String key, UnplaceableReason reason) {
      Slot from = origin.get(d.address());
      boolean staysOnOrigin = from != null && !overCapacity.contains(d.address()) && from.hasRoom();
      unplaceable.add(new Unplaceable(d.address(), d.owner(), d.group(), reason,
          message(d, reason, eligibleInGroup.getOrDefault(key, 0))
              + (staysOnOrigin ? "; it stays on " + from.name() + " for now" : "")));
      if (staysOnOrigin) {
        host(from, d, byGroup);
        target.put(d.address(), from);
      } else if (from != null) {
        whyMove.put(d.address(), whyMove.get(d.address()) + " and no other node can take it");
      }
    }

    /** 6. The changes from today's state to the target. */
    List<Change> changes() {
      List<Change> changes = new ArrayList<>();
      for (Map.Entry<Ip, List<Slot>> e : holders.entrySet()) {
        Ip ip = e.getKey();
        Slot to = target.get(ip);
        if (to == null) {
          String why = wanted.containsKey(ip) ? whyMove.get(ip) : "no longer wanted";
          e.getValue().forEach(s -> changes.add(new Change(Change.Kind.REMOVE, ip, s.name(), null, why)));
          continue;
        }
        Slot from = e.getValue().contains(to) ? to : origin.get(ip);
        if (from != to) {
          changes.add(new Change(Change.Kind.MOVE, ip, from.name(), to.name(),
              whyMove.getOrDefault(ip, "moved")));
        }
        for (Slot s : e.getValue()) {
          if (s != from) {
            changes.add(new Change(Change.Kind.REMOVE, ip, s.name(), null, "also hosted on " + to.name()));
          }
        }
      }
      for (IpDemand d : wanted.values()) {
        Slot to = target.get(d.address());
        if (to != null && !holders.containsKey(d.address())) {
          changes.add(new Change(Change.Kind.PLACE, d.address(), null, to.name(), "not hosted yet"));
        }
      }
      changes.sort(Comparator.comparing(Change::address).thenComparing(Change::kind)
          .thenComparing(c -> Objects.toString(c.from(), "")));
      return changes;
    }

    PlacementPlan result() {
      List<Change> changes = changes();
      SortedMap<String, SortedSet<Ip>> assignments = new TreeMap<>();
      for (Slot s : slots.values()) {
        assignments.put(s.name(), java.util.Collections.unmodifiableSortedSet(s.hosting));
      }
      unplaceable.sort(Comparator.comparing(Unplaceable::address).thenComparing(Unplaceable::owner));
      return new PlacementPlan(java.util.Collections.unmodifiableSortedMap(assignments), changes,
          unplaceable, headroom(slots));
    }
  }

  private static final Comparator<IpDemand> DEMAND_PRIORITY = Comparator.comparing(IpDemand::owner)
      .thenComparing(d -> Objects.toString(d.group(), ""));

  /** One demand per address; for an address wanted twice the smallest owner wins, whatever the order. */
  private static Map<Ip, IpDemand> uniqueDemands(Collection<IpDemand> demands,
      List<Unplaceable> unplaceable) {
    Map<Ip, IpDemand> wanted = new HashMap<>(demands.size() * 2);
    List<IpDemand> losers = new ArrayList<>();
    for (IpDemand d : demands) {
      IpDemand first = wanted.putIfAbsent(d.address(), d);
      if (first != null && !first.equals(d)) {
        if (DEMAND_PRIORITY.compare(d, first) < 0) {
          wanted.put(d.address(), d);
          losers.add(first);
        } else {
          losers.add(d);
        }
      }
    }
    for (IpDemand d : losers) {
      String winner = wanted.get(d.address()).owner();
      unplaceable.add(new Unplaceable(d.address(), d.owner(), d.group(),
          UnplaceableReason.DUPLICATE_DEMAND, d.address() + " is wanted by both "
          + winner + " and " + d.owner() + "; it is placed for " + winner));
    }
    return wanted;
  }

  private static List<String> keysOf(Slot s) {
    return s.node.group() == null ? List.of(ANY) : List.of(s.node.group(), ANY);
  }

  /** The least loaded node with room, preferring one that hosts nothing of the same owner. */
  private static Slot choose(TreeSet<Slot> candidates, List<String> ownerOn) {
    // Ends after at most ownerOn.size() + 1 nodes with room; full nodes sort last.
    Slot fallback = null;
    for (Slot s : candidates) {
      if (!s.hasRoom()) {
        continue;
      }
      if (ownerOn == null || !ownerOn.contains(s.name())) {
        return s;
      }
      if (fallback == null) {
        fallback = s;
      }
    }
    return fallback;
  }

  private static void host(Slot s, IpDemand d, Map<String, TreeSet<Slot>> byGroup) {
    if (!s.node.eligible()) {
      s.hosting.add(d.address());
      return;
    }
    // the sets order by load: take the node out while its load changes
    List<String> keys = keysOf(s);
    for (String k : keys) {
      byGroup.get(k).remove(s);
    }
    s.hosting.add(d.address());
    for (String k : keys) {
      byGroup.get(k).add(s);
    }
  }

  private static void unhost(Slot s, Ip ip, Map<String, TreeSet<Slot>> byGroup) {
    List<String> keys = keysOf(s);
    for (String k : keys) {
      byGroup.get(k).remove(s);
    }
    s.hosting.remove(ip);
    for (String k : keys) {
      byGroup.get(k).add(s);
    }
  }

  private static void rebalance(Map<String, TreeSet<Slot>> byGroup, Map<Ip, IpDemand> wanted,
      Map<Ip, Slot> target, Map<Ip, String> whyMove, int maxMoves) {
    int moves = 0;
    for (String key : new TreeSet<>(byGroup.keySet())) {
      TreeSet<Slot> set = byGroup.get(key);
      while (moves < maxMoves && set.size() > 1) {
        Slot busiest = set.last();
        Slot idlest = set.stream().filter(Slot::hasRoom).findFirst().orElse(null);
        if (idlest == null || idlest == busiest) {
          break;
        }
        long capHi = busiest.node.capacity();
        long capLo = idlest.node.capacity();
        // move only while it narrows the gap: (busy-1)/capBusy >= (idle+1)/capIdle
        if ((busiest.hosting.size() - 1L) * capLo < (idlest.hosting.size() + 1L) * capHi) {
          break;
        }
        Ip pick = null;
        for (Ip ip : busiest.hosting.descendingSet()) {
          String g = wanted.get(ip).group();
          if (key.equals(g == null ? ANY : g)) {
            pick = ip;
            break;
          }
        }
        if (pick == null) {
          break;
        }
        unhost(busiest, pick, byGroup);
        host(idlest, wanted.get(pick), byGroup);
        target.put(pick, idlest);
        whyMove.put(pick, "rebalance from " + busiest.name());
        moves++;
      }
    }
  }

  private static List<GroupHeadroom> headroom(TreeMap<String, Slot> slots) {
    TreeMap<String, List<Slot>> groups = new TreeMap<>();
    for (Slot s : slots.values()) {
      if (s.node.eligible()) {
        groups.computeIfAbsent(s.node.group() == null ? ANY : s.node.group(),
            k -> new ArrayList<>()).add(s);
      }
    }
    List<GroupHeadroom> out = new ArrayList<>();
    for (Map.Entry<String, List<Slot>> e : groups.entrySet()) {
      Slot busiest = null;
      int hosted = 0;
      for (Slot s : e.getValue()) {
        hosted += s.hosting.size();
        if (busiest == null || s.hosting.size() > busiest.hosting.size()) {
          busiest = s;
        }
      }
      long spare = 0;
      for (Slot s : e.getValue()) {
        if (s == busiest) {
          continue;
        }
        if (s.node.unlimited()) {
          spare = -1;
          break;
        }
        spare += s.node.capacity() - s.hosting.size();
      }
      int busy = busiest.hosting.size();
      boolean survives = spare < 0 || spare >= busy;
      out.add(new GroupHeadroom(e.getKey().equals(ANY) ? null : e.getKey(), e.getValue().size(),
          hosted, busiest.name(), busy, spare, survives));
    }
    return out;
  }

  private static String message(IpDemand d, UnplaceableReason reason, int eligible) {
    // A demand without a group may go to any node: say so, not "in any node".
    String in = d.group() == null ? "" : " in group " + d.group();
    return switch (reason) {
      case NO_ELIGIBLE_NODE_IN_GROUP -> d.address() + " of " + d.owner() + " cannot be placed: "
          + (d.group() == null ? "no node is eligible" : "no eligible node" + in);
      case ALL_NODES_AT_CAPACITY -> d.address() + " of " + d.owner() + " cannot be placed: all "
          + eligible + " eligible nodes" + in + " are at capacity";
      case DUPLICATE_DEMAND -> d.address() + " is wanted twice";
    };
  }
}
