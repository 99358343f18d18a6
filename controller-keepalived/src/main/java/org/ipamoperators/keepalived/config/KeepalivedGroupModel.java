package org.ipamoperators.keepalived.config;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.ipamoperators.core.address.Ip;

/**
 * Everything the configuration of one group depends on: its settings, the nodes running its keepalived, and its
 * VRRP instances with their router ids. The renderer turns it into one keepalived.conf per node.
 *
 * <p>Checked on construction: node names unique, instance names unique, at most one instance per address family
 * and router id (keepalived refuses two on one interface: "duplicate VRID"), every VIP in one instance only, and
 * preferred nodes among the nodes. Nodes and instances are kept sorted, so equal inputs give equal models.
 */
public record KeepalivedGroupModel(GroupSettings settings, List<KeepalivedNode> nodes, List<VrrpInstance> instances) {

  public KeepalivedGroupModel {
    Objects.requireNonNull(settings, "settings");
    List<KeepalivedNode> sortedNodes = new ArrayList<>(nodes);
    sortedNodes.sort(java.util.Comparator.comparing(KeepalivedNode::name));
    Set<String> nodeNames = new HashSet<>();
    for (KeepalivedNode node : sortedNodes) {
      if (!nodeNames.add(node.name())) {
        throw new IllegalArgumentException("Node " + node.name() + " is listed twice");
      }
    }
    List<VrrpInstance> sortedInstances = new ArrayList<>(instances);
    sortedInstances.sort(VrrpInstance.ORDER);
    Set<String> names = new HashSet<>();
    Map<String, String> routerIds = new HashMap<>();
    Map<Ip, String> vipOwners = new HashMap<>();
    for (VrrpInstance instance : sortedInstances) {
      if (!names.add(instance.name())) {
        throw new IllegalArgumentException("Two instances are named " + instance.name());
      }
      String id = instance.family() + "/" + instance.routerId();
      String previous = routerIds.putIfAbsent(id, instance.name());
      if (previous != null) {
        throw new IllegalArgumentException("Instances " + previous + " and " + instance.name() + " both use "
            + instance.family() + " router id " + instance.routerId());
      }
      for (Ip vip : instance.vips()) {
        String other = vipOwners.putIfAbsent(vip, instance.name());
        if (other != null) {
          throw new IllegalArgumentException("VIP " + vip + " is in instances " + other + " and " + instance.name());
        }
      }
      Optional<String> owner = instance.owner();
      if (owner.isPresent() && !nodeNames.contains(owner.get())) {
        throw new IllegalArgumentException("Instance " + instance.name() + " prefers node " + owner.get()
            + ", which is not among the nodes");
      }
    }
    nodes = List.copyOf(sortedNodes);
    instances = List.copyOf(sortedInstances);
  }

  /** The node called {@code name}. */
  public KeepalivedNode node(String name) {
    return nodes.stream().filter(n -> n.name().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("Node " + name + " does not run keepalived group "
            + settings.key() + " (nodes: " + nodes.stream().map(KeepalivedNode::name).toList() + ")"));
  }
}
