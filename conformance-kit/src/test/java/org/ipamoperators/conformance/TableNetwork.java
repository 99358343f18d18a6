package org.ipamoperators.conformance;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NetworkCapabilities;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;

/**
 * A platform as a table (node to slots and addresses with their owner) and a network over it that
 * follows the contract, unless told to be careless in one way: the kit's own test subject.
 */
final class TableNetwork implements NodeNetwork {
  enum Flaw { NONE, TOUCHES_FOREIGN, THROWS_WHEN_FULL, RETRY_FAILS }

  static final String US = "us";
  final Map<String, Integer> slots = new HashMap<>();
  final Map<String, Map<Ip, String>> held = new HashMap<>(); // node -> address -> owner
  final Map<String, Ip> primaries = new HashMap<>();
  private final Flaw flaw;

  TableNetwork(Flaw flaw) {
    this.flaw = flaw;
  }

  @Override
  public NetworkCapabilities capabilities() {
    return new NetworkCapabilities(true, false, true, true, true);
  }

  @Override
  public NodeAttachment describe(NodeRef node) throws NodeNetworkException {
    Map<Ip, String> h = held.get(node.name());
    if (h == null) {
      throw new NodeNetworkException(node.name(), "NoSuchNode", "no such node", false, null);
    }
    long foreign = h.values().stream().filter(o -> !US.equals(o)).count();
    return new NodeAttachment(node.name(), "if-" + node.name(), List.of(), primaries.get(node.name()),
        new TreeSet<>(h.keySet()), (int) (slots.get(node.name()) - foreign));
  }

  @Override
  public Set<Ip> addressesInUse(IpRange subnet) {
    Set<Ip> out = new TreeSet<>(primaries.values());
    held.values().forEach(h -> out.addAll(h.keySet()));
    out.removeIf(ip -> !subnet.contains(ip));
    return out;
  }

  private String holder(Ip ip) {
    return held.entrySet().stream().filter(e -> e.getValue().containsKey(ip)).map(Map.Entry::getKey).findFirst()
        .orElse(null);
  }

  @Override
  public List<AddressChangeResult> apply(List<AddressChange> changes) {
    List<AddressChangeResult> out = new ArrayList<>();
    for (AddressChange c : changes) {
      String node = c.kind() == AddressChange.Kind.DETACH ? c.fromNode() : c.toNode();
      Map<Ip, String> h = held.get(node);
      if (h == null) {
        out.add(AddressChangeResult.failed(c, "NoSuchNode", "node " + node + " does not exist", false));
        continue;
      }
      String holder = holder(c.address());
      boolean foreign = holder != null && !US.equals(held.get(holder).get(c.address()));
      if (c.kind() == AddressChange.Kind.DETACH) {
        if (!h.containsKey(c.address())) {
          out.add(flaw == Flaw.RETRY_FAILS ? AddressChangeResult.failed(c, "NotThere", "not on " + node, false)
              : AddressChangeResult.applied(c));
        } else if (foreign && flaw != Flaw.TOUCHES_FOREIGN) {
          out.add(AddressChangeResult.skipped(c, c.address() + " on " + node + " is not ours"));
        } else {
          h.remove(c.address());
          out.add(AddressChangeResult.applied(c));
        }
        continue;
      }
      if (foreign && flaw != Flaw.TOUCHES_FOREIGN) {
        out.add(AddressChangeResult.failed(c, "InUse", c.address() + " is another's (to " + node + ")", false));
        continue;
      }
      if (!node.equals(holder) && h.size() >= slots.get(node)) {
        if (flaw == Flaw.THROWS_WHEN_FULL) {
          throw new IllegalStateException("full");
        }
        out.add(AddressChangeResult.failed(c, "Full", "node " + node + " is full", false));
        continue;
      }
      if (holder != null) {
        held.get(holder).remove(c.address());
      }
      h.put(c.address(), US);
      out.add(AddressChangeResult.applied(c));
    }
    return out;
  }

  /** The contract, run against this network. */
  abstract static class Contract extends NodeNetworkContract {
    private final TableNetwork network = new TableNetwork(flaw());
    private int next = 100;
    private int foreign = 240;

    abstract Flaw flaw();

    @Override
    protected NodeNetwork network() {
      return network;
    }

    private NodeRef make(String name, int slots) {
      Ip primary = Ip.parse("198.51.100." + next++);
      network.slots.put(name, slots);
      network.held.put(name, new TreeMap<>());
      network.primaries.put(name, primary);
      return new NodeRef(name, null, Map.of(), List.of(primary));
    }

    @Override
    protected NodeRef node(String name) {
      return make(name, 8);
    }

    @Override
    protected NodeRef smallNode(String name) {
      return make(name, 2);
    }

    @Override
    protected IpRange subnet() {
      return IpRange.parse("198.51.100.0/24");
    }

    @Override
    protected Ip foreignAddress(NodeRef node) {
      Ip ip = Ip.parse("198.51.100." + foreign++);
      network.held.get(node.name()).put(ip, "another-tool");
      return ip;
    }

    @Override
    protected NodeRef missingNode() {
      return new NodeRef("gone", null, Map.of(), List.of());
    }
  }
}
