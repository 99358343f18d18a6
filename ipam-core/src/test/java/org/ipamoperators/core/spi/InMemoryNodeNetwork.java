package org.ipamoperators.core.spi;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;

/**
 * A {@link NodeNetwork} held in memory, for tests of code that drives the SPI. Nodes have a subnet,
 * a primary address and a capacity; addresses can be marked as used by someone else; a node can be
 * made to fail every call with an error code, to test per-node isolation. Test fixture only.
 */
public final class InMemoryNodeNetwork implements NodeNetwork {
  private final Map<String, NodeAttachment> nodes = new LinkedHashMap<>();
  private final Map<String, Set<Ip>> secondary = new HashMap<>();
  private final Set<Ip> foreign = new HashSet<>();
  private final Map<String, String> failing = new HashMap<>();
  private final List<AddressChange> applied = new ArrayList<>();
  private final NetworkCapabilities capabilities;

  public InMemoryNodeNetwork(NetworkCapabilities capabilities) {
    this.capabilities = capabilities;
  }

  public InMemoryNodeNetwork addNode(String name, String subnet, String primary, int capacity) {
    nodes.put(name, new NodeAttachment(name, "if-" + name, List.of(IpRange.parse(subnet)),
        Ip.parse(primary), Set.of(), capacity));
    secondary.put(name, new TreeSet<>());
    return this;
  }

  public InMemoryNodeNetwork addForeignAddress(String ip) {
    foreign.add(Ip.parse(ip));
    return this;
  }

  public InMemoryNodeNetwork failNode(String name, String errorCode) {
    failing.put(name, errorCode);
    return this;
  }

  public Set<Ip> secondaryOf(String node) {
    return Set.copyOf(secondary.get(node));
  }

  public List<AddressChange> applied() {
    return List.copyOf(applied);
  }

  @Override
  public NetworkCapabilities capabilities() {
    return capabilities;
  }

  @Override
  public NodeAttachment describe(NodeRef node) throws NodeNetworkException {
    NodeAttachment a = nodes.get(node.name());
    if (a == null) {
      throw new NodeNetworkException(node.name(), "NotFound", "no such node", false, null);
    }
    failIfBroken(node.name());
    return new NodeAttachment(a.node(), a.interfaceId(), a.subnets(), a.primaryAddress(),
        secondary.get(node.name()), a.capacity());
  }

  @Override
  public Set<Ip> addressesInUse(IpRange subnet) throws NodeNetworkException {
    Set<Ip> used = new TreeSet<>();
    for (NodeAttachment a : nodes.values()) {
      if (subnet.contains(a.primaryAddress())) {
        used.add(a.primaryAddress());
      }
      secondary.get(a.node()).stream().filter(subnet::contains).forEach(used::add);
    }
    foreign.stream().filter(subnet::contains).forEach(used::add);
    return used;
  }

  @Override
  public List<AddressChangeResult> apply(List<AddressChange> changes) {
    List<AddressChangeResult> out = new ArrayList<>();
    for (AddressChange c : changes) {
      String broken = c.toNode() != null && failing.containsKey(c.toNode()) ? c.toNode()
          : c.fromNode() != null && failing.containsKey(c.fromNode()) && c.kind() == AddressChange.Kind.DETACH
              ? c.fromNode() : null;
      if (broken != null) {
        out.add(AddressChangeResult.failed(c, failing.get(broken), "node " + broken + " fails", true));
        continue;
      }
      if (c.toNode() != null) {
        NodeAttachment target = nodes.get(c.toNode());
        if (target == null) {
          out.add(AddressChangeResult.failed(c, "NotFound", "no node " + c.toNode(), false));
          continue;
        }
        Set<Ip> held = secondary.get(c.toNode());
        if (held.size() >= target.capacity()) {
          out.add(AddressChangeResult.failed(c, "CapacityExceeded", c.toNode() + " is full", false));
          continue;
        }
        held.add(c.address()); // make before break
      }
      if (c.fromNode() != null && secondary.containsKey(c.fromNode())) {
        secondary.get(c.fromNode()).remove(c.address());
      }
      applied.add(c);
      out.add(AddressChangeResult.applied(c));
    }
    return out;
  }

  private void failIfBroken(String node) throws NodeNetworkException {
    String code = failing.get(node);
    if (code != null) {
      throw new NodeNetworkException(node, code, "injected failure", true, null);
    }
  }
}
