package org.ipamoperators.core.spi;

import java.util.List;
import java.util.Objects;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.placement.Change;
import org.ipamoperators.core.placement.PlacementPlan;

/** One address to attach to a node, detach from it, or move between two nodes. */
public record AddressChange(Kind kind, Ip address, String fromNode, String toNode) {
  public enum Kind { ATTACH, DETACH, MOVE }

  public AddressChange {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(address, "address");
    if ((kind == Kind.ATTACH || kind == Kind.MOVE) && toNode == null) {
      throw new IllegalArgumentException(kind + " of " + address + " needs a target node");
    }
    if ((kind == Kind.DETACH || kind == Kind.MOVE) && fromNode == null) {
      throw new IllegalArgumentException(kind + " of " + address + " needs a source node");
    }
  }

  public static AddressChange attach(Ip address, String node) {
    return new AddressChange(Kind.ATTACH, address, null, node);
  }

  public static AddressChange detach(Ip address, String node) {
    return new AddressChange(Kind.DETACH, address, node, null);
  }

  public static AddressChange move(Ip address, String from, String to) {
    return new AddressChange(Kind.MOVE, address, from, to);
  }

  /** The network changes that carry out a placement plan. */
  public static List<AddressChange> of(PlacementPlan plan) {
    return plan.changes().stream().map(AddressChange::of).toList();
  }

  public static AddressChange of(Change c) {
    return switch (c.kind()) {
      case PLACE -> attach(c.address(), c.to());
      case MOVE -> move(c.address(), c.from(), c.to());
      case REMOVE -> detach(c.address(), c.from());
    };
  }
}
