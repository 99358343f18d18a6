package org.ipamoperators.eip.plan;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Node mode over all node-mode Eips at once: each Eip is held by one node matching its selector, a node holds at
 * most one Eip (its primary private address takes one Elastic IP). A holder that still matches and has not failed
 * keeps its Eip (no traffic moved without need); Eips without one take the first healthy free node by name, in Eip
 * key order. A node matched by some Eip gets {@code ready-status=true} when it holds one, else {@code false}.
 * Pure and deterministic: every reconcile of every Eip computes the same assignment from the same state.
 */
public record NodeAssignment(Map<String, String> holders, Map<String, String> unassigned,
    Map<String, Boolean> readyStatus) {

  public Optional<String> holder(String eipKey) {
    return Optional.ofNullable(holders.get(eipKey));
  }

  public static NodeAssignment plan(List<NodeEip> eips, List<NodeCandidate> nodes) {
    List<NodeEip> byKey = new ArrayList<>(eips);
    byKey.sort(Comparator.comparing(NodeEip::key));
    List<NodeCandidate> byName = new ArrayList<>(nodes);
    byName.sort(Comparator.comparing(NodeCandidate::name));
    Map<String, NodeCandidate> named = new TreeMap<>();
    byName.forEach(n -> named.put(n.name(), n));

    Map<String, String> holders = new TreeMap<>();
    Set<String> taken = new HashSet<>();
    for (NodeEip e : byKey) {
      NodeCandidate current = e.holder() == null ? null : named.get(e.holder());
      if (current != null && current.matches(e.selector()) && current.mayKeep() && taken.add(current.name())) {
        holders.put(e.key(), current.name());
      }
    }
    Map<String, String> unassigned = new TreeMap<>();
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
      } else {
        long ready = matching.stream().filter(NodeCandidate::mayTake).count();
        unassigned.put(e.key(), matching.isEmpty()
            ? "no node labelled eip.materialize.cloud/manage matches " + new TreeMap<>(e.selector())
            : ready == 0 ? "none of the " + matching.size() + " matching nodes is Ready (and reachable on AWS)"
            : "all " + ready + " Ready matching nodes hold another Eip");
      }
    }
    Map<String, Boolean> ready = new TreeMap<>();
    for (NodeCandidate n : byName) {
      if (byKey.stream().anyMatch(e -> n.matches(e.selector()))) {
        ready.put(n.name(), taken.contains(n.name()));
      }
    }
    return new NodeAssignment(holders, unassigned, ready);
  }
}
