package org.ipamoperators.eip.plan;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Node mode over all node-mode Eips at once: each Eip is held by one node matching its selector, a node holds at
 * most one Eip (its primary private address takes one Elastic IP). A holder that still matches and has not failed
 * keeps its Eip (no traffic moved without need); Eips without one take the first healthy free node by name, in Eip
 * key order. An Eip whose holder has failed (or is recovering) but that no other node may take stays on its holder
 * ({@link #kept}): detaching it would cut the only gateway, and after a control-plane outage every node looks failed
 * at once. A node matched by some Eip gets {@code ready-status=true} when it holds one, else {@code false}.
 * Nodes outside the operator's {@link NodeBound} never hold one; an Eip whose selector matches only such nodes is
 * {@link #outsideBound}. An Eip whose namespace may not use node mode ({@link NodeEip#allowed()}) is given no node;
 * the node it already holds (from before the limit was set) stays {@link #frozen} to it, so no other Eip is
 * associated with that node's address meanwhile.
 * Pure and deterministic: every reconcile of every Eip computes the same assignment from the same state.
 *
 * @param holders Eip key to the node holding it (including {@link #kept})
 * @param unassigned Eip key to why no node holds it (its address is detached)
 * @param kept Eip key to why it stays on a holder that is not Ready
 * @param readyStatus node to its {@code ready-status} label
 * @param frozen Eip key (of a namespace that may not use node mode) to the node it still holds
 * @param outsideBound the unassigned Eips whose selector matches only nodes outside the bound
 */
public record NodeAssignment(Map<String, String> holders, Map<String, String> unassigned, Map<String, String> kept,
    Map<String, Boolean> readyStatus, Map<String, String> frozen, Set<String> outsideBound) {

  public Optional<String> holder(String eipKey) {
    return Optional.ofNullable(holders.get(eipKey));
  }

  public static NodeAssignment plan(List<NodeEip> eips, List<NodeCandidate> nodes) {
    return plan(eips, nodes, "");
  }

  /** The plan; {@code bound} is the node bound as the operator wrote it, for messages. */
  public static NodeAssignment plan(List<NodeEip> eips, List<NodeCandidate> nodes, String bound) {
    List<NodeEip> byKey = new ArrayList<>(eips.stream().filter(NodeEip::allowed).toList());
    byKey.sort(Comparator.comparing(NodeEip::key));
    List<NodeCandidate> byName = new ArrayList<>(nodes);
    byName.sort(Comparator.comparing(NodeCandidate::name));
    Map<String, NodeCandidate> named = new TreeMap<>();
    byName.forEach(n -> named.put(n.name(), n));

    Set<String> taken = new HashSet<>();
    Map<String, String> frozen = frozen(eips, named, taken);
    Map<String, String> holders = new TreeMap<>();
    for (NodeEip e : byKey) {
      NodeCandidate current = current(e, named);
      if (current != null && current.mayKeep() && taken.add(current.name())) {
        holders.put(e.key(), current.name());
      }
    }
    Map<String, String> unassigned = new TreeMap<>();
    Set<String> outsideBound = new TreeSet<>();
    for (NodeEip e : byKey) {
      if (holders.containsKey(e.key())) {
        continue;
      }
      List<NodeCandidate> matching = byName.stream().filter(n -> n.matches(e.selector())).toList();
      Optional<NodeCandidate> free = matching.stream().filter(NodeCandidate::mayTake)
          .filter(n -> !taken.contains(n.name())).findFirst();
      if (free.isPresent()) {
        taken.add(free.get().name());
        holders.put(e.key(), free.get().name());
      } else if (!matching.isEmpty() && matching.stream().noneMatch(NodeCandidate::inBound)) {
        outsideBound.add(e.key());
        unassigned.put(e.key(), "the " + matching.size() + " nodes matching " + new TreeMap<>(e.selector())
            + " are all outside the nodes node-mode Eips may select (" + bound + ")");
      } else {
        unassigned.put(e.key(), whyNone(e, matching));
      }
    }
    Map<String, String> kept = keepInPlace(byKey, named, holders, unassigned, taken);
    Map<String, Boolean> ready = new TreeMap<>();
    for (NodeCandidate n : byName) {
      if (frozen.containsValue(n.name()) || byKey.stream().anyMatch(e -> n.matches(e.selector()))) {
        ready.put(n.name(), taken.contains(n.name()));
      }
    }
    return new NodeAssignment(holders, unassigned, kept, ready, frozen, outsideBound);
  }

  /**
   * Eips of namespaces that may not use node mode keep the node they hold, if it still exists, and nothing else:
   * the address is never detached behind the Eip's back, and never shared with another Eip.
   */
  private static Map<String, String> frozen(List<NodeEip> eips, Map<String, NodeCandidate> named,
      Set<String> taken) {
    Map<String, String> frozen = new TreeMap<>();
    eips.stream().filter(e -> !e.allowed()).sorted(Comparator.comparing(NodeEip::key)).forEach(e -> {
      if (e.holder() != null && named.containsKey(e.holder()) && taken.add(e.holder())) {
        frozen.put(e.key(), e.holder());
      }
    });
    return frozen;
  }

  /** The Eip's holder when it still matches its selector, else null. */
  private static NodeCandidate current(NodeEip e, Map<String, NodeCandidate> named) {
    NodeCandidate c = e.holder() == null ? null : named.get(e.holder());
    return c != null && c.matches(e.selector()) ? c : null;
  }

  /** Unassigned Eips whose failed holder may stay: they remain there (moved from unassigned to holders). */
  private static Map<String, String> keepInPlace(List<NodeEip> byKey, Map<String, NodeCandidate> named,
      Map<String, String> holders, Map<String, String> unassigned, Set<String> taken) {
    Map<String, String> kept = new TreeMap<>();
    for (NodeEip e : byKey) {
      NodeCandidate current = current(e, named);
      if (!unassigned.containsKey(e.key()) || current == null || !current.mayStay() || !taken.add(current.name())) {
        continue;
      }
      holders.put(e.key(), current.name());
      kept.put(e.key(), "node " + current.name() + " holds it but is " + current.condition().name().toLowerCase()
          + " (not Ready); it stays there because no other node may take it: "
          + unassigned.remove(e.key()));
    }
    return kept;
  }

  private static String whyNone(NodeEip e, List<NodeCandidate> matching) {
    long ready = matching.stream().filter(NodeCandidate::mayTake).count();
    return matching.isEmpty()
        ? "no node labelled eip.materialize.cloud/manage matches " + new TreeMap<>(e.selector())
        : ready == 0 ? "none of the " + matching.size() + " matching nodes is Ready (and reachable on AWS)"
        : "all " + ready + " Ready matching nodes hold another Eip";
  }
}
