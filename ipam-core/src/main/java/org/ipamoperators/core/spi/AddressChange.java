package org.ipamoperators.core.spi;

import java.util.List;
import java.util.Objects;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.placement.Change;
import org.ipamoperators.core.placement.PlacementPlan;

/**
 * One address to attach to a node, detach from it, or move between two nodes.
 *
 * @param kind attach, detach or move
 * @param address the address
 * @param fromNode the node it leaves (detach, move), else null
 * @param toNode the node it goes to (attach, move), else null
 */
public record AddressChange(Kind kind, Ip address, String fromNode, String toNode) {
  /** What happens to the address. */
  public enum Kind {
    /** Put on {@code toNode}. */
    ATTACH,
    /** Taken off {@code fromNode}. */
    DETACH,
    /** From {@code fromNode} to {@code toNode}, made before broken where the platform can. */
    MOVE
  }

  /**
   * Checks that each kind has the nodes it needs.
   *
   * @param kind attach, detach or move
   * @param address the address
   * @param fromNode the source node, needed by detach and move
   * @param toNode the target node, needed by attach and move
   */
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

  /**
   * Puts an address on a node.
   *
   * @param address the address
   * @param node the node that will carry it
   * @return the change
   */
  public static AddressChange attach(Ip address, String node) {
    return new AddressChange(Kind.ATTACH, address, null, node);
  }

  /**
   * Takes an address off a node.
   *
   * @param address the address
   * @param node the node that carries it
   * @return the change
   */
  public static AddressChange detach(Ip address, String node) {
    return new AddressChange(Kind.DETACH, address, node, null);
  }

  /**
   * Moves an address between nodes.
   *
   * @param address the address
   * @param from the node that carries it
   * @param to the node that will carry it
   * @return the change
   */
  public static AddressChange move(Ip address, String from, String to) {
    return new AddressChange(Kind.MOVE, address, from, to);
  }

  /**
   * The network changes that carry out a placement plan.
   *
   * @param plan the plan
   * @return one change per change of the plan, in its order
   */
  public static List<AddressChange> of(PlacementPlan plan) {
    return plan.changes().stream().map(AddressChange::of).toList();
  }

  /**
   * The network change of one placement change.
   *
   * @param c a placement change
   * @return place as attach, move as move, remove as detach
   */
  public static AddressChange of(Change c) {
    return switch (c.kind()) {
      case PLACE -> attach(c.address(), c.to());
      case MOVE -> move(c.address(), c.from(), c.to());
      case REMOVE -> detach(c.address(), c.from());
    };
  }
}
