package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.keepalived.config.KeepalivedNode;

/**
 * The nodes a group's DaemonSet runs on: those matching its {@code nodeSelector} (the pods tolerate every taint),
 * with their host addresses (the first InternalIP of each family, else ExternalIP) for unicast peers.
 */
final class GroupNodes {
  private GroupNodes() {}

  static boolean selected(Node node, Map<String, String> nodeSelector) {
    if (node.getMetadata().getDeletionTimestamp() != null) {
      return false;
    }
    if (nodeSelector == null || nodeSelector.isEmpty()) {
      return true;
    }
    Map<String, String> labels = node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
    return nodeSelector.entrySet().stream().allMatch(e -> Objects.equals(labels.get(e.getKey()), e.getValue()));
  }

  static KeepalivedNode toKeepalived(Node node, boolean interfaceFromIp) {
    Optional<Ip> v4 = address(node, "InternalIP", true).or(() -> address(node, "ExternalIP", true));
    Optional<Ip> v6 = address(node, "InternalIP", false).or(() -> address(node, "ExternalIP", false));
    KeepalivedNode k = new KeepalivedNode(node.getMetadata().getName(), v4, v6, Optional.empty());
    return interfaceFromIp ? k.withInterface(GroupSpecs.INTERFACE_PLACEHOLDER) : k;
  }

  /** What of a node matters to a group: its labels and addresses (not its heartbeats). */
  static boolean relevantChange(Node a, Node b) {
    return !Objects.equals(a.getMetadata().getLabels(), b.getMetadata().getLabels())
        || !Objects.equals(addresses(a), addresses(b))
        || !Objects.equals(a.getMetadata().getDeletionTimestamp(), b.getMetadata().getDeletionTimestamp());
  }

  private static List<NodeAddress> addresses(Node n) {
    return n.getStatus() == null || n.getStatus().getAddresses() == null ? List.of() : n.getStatus().getAddresses();
  }

  private static Optional<Ip> address(Node node, String type, boolean v4) {
    for (NodeAddress a : addresses(node)) {
      if (!type.equals(a.getType()) || a.getAddress() == null) {
        continue;
      }
      try {
        Ip ip = Ip.parse(a.getAddress().trim());
        if (ip.isIPv4() == v4) {
          return Optional.of(ip);
        }
      } catch (RuntimeException e) {
        // not an address: skip it
      }
    }
    return Optional.empty();
  }
}
