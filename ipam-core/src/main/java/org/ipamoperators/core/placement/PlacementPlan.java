package org.ipamoperators.core.placement;

import java.util.List;
import java.util.SortedMap;
import java.util.SortedSet;
import org.ipamoperators.core.address.Ip;

/**
 * The planner's answer: the addresses each node should host, the changes that get there from
 * today's state, what cannot be placed and why, and the headroom of each group.
 */
public record PlacementPlan(SortedMap<String, SortedSet<Ip>> assignments, List<Change> changes,
    List<Unplaceable> unplaceable, List<GroupHeadroom> headroom) {

  /**
   * Copies the lists.
   *
   * @param assignments the addresses each node should host
   * @param changes the changes from today's state
   * @param unplaceable what cannot be placed and why
   * @param headroom each group's headroom
   */
  public PlacementPlan {
    changes = List.copyOf(changes);
    unplaceable = List.copyOf(unplaceable);
    headroom = List.copyOf(headroom);
  }

  /**
   * The changes of one kind.
   *
   * @param kind place, move or remove
   * @return those changes, in order
   */
  public List<Change> changes(Change.Kind kind) {
    return changes.stream().filter(c -> c.kind() == kind).toList();
  }
}
