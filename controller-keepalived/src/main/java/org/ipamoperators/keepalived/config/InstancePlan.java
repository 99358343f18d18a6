package org.ipamoperators.keepalived.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The instances a group needs and the problems found while planning them; {@link #withRouterIds} completes it into
 * the model the renderer takes.
 *
 * @param settings the group's settings
 * @param nodes the nodes, by name
 * @param instances the planned instances, by key then family
 * @param problems what could not be planned, per service
 */
public record InstancePlan(
    GroupSettings settings,
    List<KeepalivedNode> nodes,
    List<PlannedInstance> instances,
    List<Problem> problems) {

  public InstancePlan {
    nodes = List.copyOf(nodes);
    instances = List.copyOf(instances);
    problems = List.copyOf(problems);
  }

  /** The keys that need a router id (one per key; both families of a key share it), sorted. */
  public SortedSet<String> routerIdKeys() {
    SortedSet<String> keys = new TreeSet<>();
    instances.forEach(instance -> keys.add(instance.key()));
    return Collections.unmodifiableSortedSet(keys);
  }

  /** The services each key carries. */
  public SortedMap<String, SortedSet<ServiceRef>> servicesByKey() {
    SortedMap<String, SortedSet<ServiceRef>> byKey = new TreeMap<>();
    instances.forEach(i -> byKey.computeIfAbsent(i.key(), k -> new TreeSet<>()).addAll(i.services()));
    return byKey;
  }

  /** The model with the router ids found (keys not in the map are not announced), and all problems. */
  public Assembly withRouterIds(Map<String, Integer> routerIds) {
    List<Problem> all = new ArrayList<>(problems);
    List<VrrpInstance> assembled = new ArrayList<>();
    Map<String, String> taken = new HashMap<>();
    Set<String> unassigned = new HashSet<>();
    SortedMap<String, SortedSet<ServiceRef>> byKey = servicesByKey();
    for (PlannedInstance instance : instances) {
      Integer id = routerIds.get(instance.key());
      if (id == null || id < 1 || id > 255) {
        if (unassigned.add(instance.key())) {
          all.add(new Problem(Problem.Kind.NO_ROUTER_ID, byKey.get(instance.key()), id == null
              ? "no VRRP router id for " + instance.key() + " (none free in the group's network, or not allocated"
                  + " yet): its VIPs are not announced"
              : "router id " + id + " given for " + instance.key() + " is not in 1..255: its VIPs are not announced"));
        }
        continue;
      }
      String slot = instance.family() + "/" + id;
      String holder = taken.putIfAbsent(slot, instance.key());
      if (holder != null && !holder.equals(instance.key())) {
        all.add(new Problem(Problem.Kind.ROUTER_ID_CONFLICT, instance.services(), "router id " + id + " of "
            + instance.key() + " is also given to " + holder + ": " + instance.family().kubernetesName()
            + " VIPs of " + instance.key() + " not announced"));
        continue;
      }
      assembled.add(instance.withRouterId(id));
    }
    return new Assembly(new KeepalivedGroupModel(settings, nodes, assembled), all);
  }

  /** A renderable model and every problem (planning and router ids). */
  public record Assembly(KeepalivedGroupModel model, List<Problem> problems) {
    public Assembly {
      problems = List.copyOf(problems);
    }
  }
}
