package org.ipamoperators.cloud.aws;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Filter;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;

/**
 * The write side of {@link Ec2NodeNetwork#apply}: assigns, moves and unassigns on the ENIs the
 * nodes' descriptions found, listing an address in the target's ownership tags before it is
 * assigned and taking it off the tags of the ENI it leaves.
 */
final class EniAddressChanges {
  // Logged under Ec2NodeNetwork: the class whose logger operators turn up.
  private static final Logger LOG = LoggerFactory.getLogger(Ec2NodeNetwork.class);

  private final Ec2Client ec2;
  private final Map<String, NodeEni> nodes;
  private final EniOwnership ownership;

  /** {@code nodes}: the described ENIs by node name, shared with (and filled by) the read side. */
  EniAddressChanges(Ec2Client ec2, Map<String, NodeEni> nodes, EniOwnership ownership) {
    this.ec2 = ec2;
    this.nodes = nodes;
    this.ownership = ownership;
  }

  /** See {@link Ec2NodeNetwork#apply}. */
  List<AddressChangeResult> apply(List<AddressChange> changes) {
    AddressChangeResult[] results = new AddressChangeResult[changes.size()];
    Map<String, List<Integer>> attach = new LinkedHashMap<>();
    Map<String, List<Integer>> detach = new LinkedHashMap<>();
    for (int i = 0; i < changes.size(); i++) {
      AddressChange c = changes.get(i);
      if (c.kind() == AddressChange.Kind.DETACH) {
        detach.computeIfAbsent(c.fromNode(), k -> new ArrayList<>()).add(i);
      } else {
        attach.computeIfAbsent(c.toNode(), k -> new ArrayList<>()).add(i);
      }
    }
    attach.forEach((node, idx) -> attachOn(node, idx, changes, results));
    detach.forEach((node, idx) -> detachFrom(node, idx, changes, results));
    return List.of(results);
  }

  /** The node's described ENI, or null after failing every change of {@code idx} (retryable). */
  private NodeEni describedOrFail(String node, List<Integer> idx, List<AddressChange> changes,
      AddressChangeResult[] results) {
    NodeEni eni = nodes.get(node);
    if (eni == null) {
      idx.forEach(i -> results[i] = AddressChangeResult.failed(changes.get(i), "NodeNotDescribed",
          "node " + node + " has no known EC2 instance (its description failed or was never made)", true));
    }
    return eni;
  }

  /** The changes one node's ENI settles in one pass, indexed by address, and their results. */
  private record Batch(NodeEni eni, Map<Ip, Integer> pending, List<AddressChange> changes,
      AddressChangeResult[] results) {
    void applied(Ip ip) {
      results[pending.get(ip)] = AddressChangeResult.applied(changes.get(pending.get(ip)));
    }

    void failed(Ip ip, Ec2CallFailed f) {
      results[pending.get(ip)] = EniAddressChanges.failed(changes.get(pending.get(ip)), f, eni);
    }
  }

  private void attachOn(String node, List<Integer> idx, List<AddressChange> changes, AddressChangeResult[] results) {
    NodeEni target = describedOrFail(node, idx, changes, results);
    if (target == null) {
      return;
    }
    Batch batch = new Batch(target, attachPending(target, idx, changes, results), changes, results);
    if (batch.pending().isEmpty()) {
      return;
    }
    Map<Ip, NetworkInterface> holders;
    try {
      holders = holders(target.subnetId(), batch.pending().keySet());
    } catch (Ec2CallFailed f) {
      batch.pending().keySet().forEach(ip -> batch.failed(ip, f));
      return;
    }
    Map<Ip, EniPlacement.Holder> byIp = new LinkedHashMap<>();
    holders.forEach((ip, eni) -> byIp.put(ip, new EniPlacement.Holder(eni.networkInterfaceId(),
        EniOwnership.listed(eni.tagSet()))));
    EniPlacement placement = EniPlacement.of(target.eniId(), batch.pending().keySet(), byIp);
    placement.refused().forEach((ip, holder) -> results[batch.pending().get(ip)] = AddressChangeResult.failed(
        changes.get(batch.pending().get(ip)), "AddressInUse", ip + " is held by " + holder
        + ", which this operator did not give it to: left alone", false));
    List<Ip> toTag = placement.toTag();
    if (toTag.isEmpty()) {
      return;
    }
    try {
      ownership.own(target, toTag);
    } catch (Ec2CallFailed f) {
      toTag.forEach(ip -> batch.failed(ip, f));
      return;
    }
    List<Ip> done = assignAll(batch, placement);
    done.addAll(keepUnansweredAssigns(batch, toTag, done));
    target.secondaries().addAll(done);
    releaseMoved(placement.movedFrom(), holders, done);
  }

  /**
   * The changes still to make on the target: an address it already owns is applied, an IPv6
   * address on a subnet with no IPv6 block fails; the rest, by address.
   */
  private static Map<Ip, Integer> attachPending(NodeEni target, List<Integer> idx, List<AddressChange> changes,
      AddressChangeResult[] results) {
    Map<Ip, Integer> pending = new LinkedHashMap<>();
    for (int i : idx) {
      Ip ip = changes.get(i).address();
      if (target.owns(ip)) {
        results[i] = AddressChangeResult.applied(changes.get(i));
      } else if (!ip.isIPv4() && !target.ipv6()) {
        results[i] = AddressChangeResult.failed(changes.get(i), "SubnetHasNoIpv6", "the subnet of "
            + target.where() + " has no IPv6 block", false);
      } else {
        pending.put(ip, i);
      }
    }
    return pending;
  }

  /** The assign calls of a placement (moves first, make before break for IPv4); the addresses placed. */
  private List<Ip> assignAll(Batch batch, EniPlacement placement) {
    NodeEni target = batch.eni();
    placement.adopt().forEach(batch::applied);
    List<Ip> done = new ArrayList<>(placement.adopt());
    List<Ip> reassign = placement.reassign();
    List<Ip> assign = placement.assign();
    done.addAll(run(batch, reassign, () -> ec2.assignPrivateIpAddresses(r -> r
        .networkInterfaceId(target.eniId()).privateIpAddresses(strings(reassign)).allowReassignment(true)),
        "AssignPrivateIpAddresses"));
    done.addAll(run(batch, assign, () -> ec2.assignPrivateIpAddresses(r -> r
        .networkInterfaceId(target.eniId()).privateIpAddresses(strings(assign)).allowReassignment(false)),
        "AssignPrivateIpAddresses"));
    // IPv6 has no reassignment: a move unassigns from the old ENI first (break before make).
    List<Ip> v6Ready = new ArrayList<>(placement.assignV6());
    placement.v6From().forEach((eni, ips) -> {
      try {
        Ec2CallFailed.call("UnassignIpv6Addresses",
            () -> ec2.unassignIpv6Addresses(r -> r.networkInterfaceId(eni).ipv6Addresses(strings(ips))));
      } catch (Ec2CallFailed f) {
        ips.forEach(ip -> {
          batch.failed(ip, f);
          v6Ready.remove(ip);
        });
      }
    });
    done.addAll(run(batch, v6Ready, () -> ec2.assignIpv6Addresses(r -> r
        .networkInterfaceId(target.eniId()).ipv6Addresses(strings(v6Ready))), "AssignIpv6Addresses"));
    return done;
  }

  /**
   * After the assigns, for the tagged addresses not placed: an assign whose answer was lost (a reset,
   * a timeout after EC2 did the work) may have placed its addresses, so what the ENI holds now stays
   * listed and counts as done (returned). What it does not hold is not ours and loses its listing;
   * if the ENI cannot be read, the listing stays (a listed address that is not there grants
   * nothing, an address there but unlisted would belong to nobody).
   */
  private List<Ip> keepUnansweredAssigns(Batch batch, List<Ip> toTag, List<Ip> done) {
    List<Ip> untag = new ArrayList<>(toTag);
    untag.removeAll(done);
    if (untag.isEmpty()) {
      return List.of();
    }
    List<Ip> placed = new ArrayList<>();
    Set<Ip> held = heldNow(batch.eni());
    for (Ip ip : List.copyOf(untag)) {
      if (held == null || held.contains(ip)) {
        untag.remove(ip);
      }
      if (held != null && held.contains(ip)) {
        placed.add(ip);
        batch.applied(ip);
      }
    }
    if (!untag.isEmpty()) {
      ownership.disownQuietly(batch.eni(), untag); // what was not assigned is not ours
    }
    return placed;
  }

  /** The old ENIs of moved addresses let go and lose their tags (a stale tag alone grants nothing). */
  private void releaseMoved(Map<String, List<Ip>> movedFrom, Map<Ip, NetworkInterface> holders, List<Ip> done) {
    Map<String, List<Ip>> movedV4 = new LinkedHashMap<>();
    movedFrom.forEach((eni, ips) -> {
      List<Ip> moved = ips.stream().filter(Ip::isIPv4).filter(done::contains).toList();
      if (!moved.isEmpty()) {
        movedV4.put(eni, moved);
      }
    });
    letGo(movedV4);
    movedFrom.forEach((eni, ips) -> {
      List<Ip> moved = ips.stream().filter(done::contains).toList();
      if (!moved.isEmpty()) {
        NodeEni known = nodes.values().stream().filter(n -> n.eniId().equals(eni)).findFirst().orElse(null);
        if (known != null) {
          known.secondaries().removeAll(moved);
          ownership.disownQuietly(known, moved);
        } else {
          NetworkInterface holder = holders.values().stream().filter(h -> h.networkInterfaceId().equals(eni))
              .findFirst().orElseThrow();
          ownership.disownQuietly(new NodeEni("(not a node)", "", eni, holder.subnetId(),
              ConcurrentHashMap.newKeySet(), EniOwnership.listed(holder.tagSet()), false), moved);
        }
      }
    });
  }

  /** The secondary addresses (IPv4 and IPv6) the ENI holds now, or null when it cannot be read. */
  private Set<Ip> heldNow(NodeEni target) {
    try {
      NetworkInterface eni = Ec2CallFailed.call("DescribeNetworkInterfaces",
          () -> ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(target.eniId()))).networkInterfaces()
          .stream().findFirst().orElse(null);
      if (eni == null) {
        return null;
      }
      Set<Ip> held = new HashSet<>();
      eni.privateIpAddresses().forEach(a -> held.add(Ip.parse(a.privateIpAddress())));
      eni.ipv6Addresses().forEach(a -> held.add(Ip.parse(a.ipv6Address())));
      return held;
    } catch (Ec2CallFailed f) {
      LOG.info("could not read {} after a failed assign: {} ({}); its ownership tags stay", target.where(),
          f.getMessage(), f.code);
      return null;
    }
  }

  /** One assign or unassign call for a group; the addresses it placed, results filled either way. */
  private List<Ip> run(Batch batch, List<Ip> ips, Runnable call, String name) {
    if (ips.isEmpty()) {
      return List.of();
    }
    try {
      Ec2CallFailed.call(name, () -> {
        call.run();
        return null;
      });
      ips.forEach(batch::applied);
      return ips;
    } catch (Ec2CallFailed f) {
      LOG.warn("{} on {} for {}: {} ({})", name, batch.eni().where(), ips, f.getMessage(), f.code);
      ips.forEach(ip -> batch.failed(ip, f));
      return List.of();
    }
  }

  /**
   * The ENIs holding the addresses now, by address. An address of a subnet can only be on an ENI of
   * that subnet, so one listing of the subnet's ENIs answers for all of them.
   */
  private Map<Ip, NetworkInterface> holders(String subnetId, Set<Ip> ips) {
    Map<Ip, NetworkInterface> out = new LinkedHashMap<>();
    for (NetworkInterface eni : enisOf(subnetId)) {
      eni.privateIpAddresses().stream().map(a -> Ip.parse(a.privateIpAddress())).filter(ips::contains)
          .forEach(ip -> out.put(ip, eni));
      eni.ipv6Addresses().stream().map(a -> Ip.parse(a.ipv6Address())).filter(ips::contains)
          .forEach(ip -> out.put(ip, eni));
    }
    return out;
  }

  private List<NetworkInterface> enisOf(String subnetId) {
    return Ec2CallFailed.call("DescribeNetworkInterfaces", () -> ec2.describeNetworkInterfacesPaginator(r -> r
        .filters(Filter.builder().name("subnet-id").values(subnetId).build())).networkInterfaces().stream().toList());
  }

  /**
   * EC2 takes a reassigned address off its old ENI; moto 5.1 does not, and a read may lag. The old
   * ENIs are checked once and let go of explicitly, so an address never stays on two ENIs. Only
   * addresses this operator owned there (checked before the move) are concerned.
   */
  private void letGo(Map<String, List<Ip>> movedFrom) {
    if (movedFrom.isEmpty()) {
      return;
    }
    try {
      List<NetworkInterface> old = Ec2CallFailed.call("DescribeNetworkInterfaces",
          () -> ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(movedFrom.keySet())).networkInterfaces());
      for (NetworkInterface eni : old) {
        List<Ip> moved = movedFrom.get(eni.networkInterfaceId());
        List<Ip> still = eni.privateIpAddresses().stream().map(a -> Ip.parse(a.privateIpAddress()))
            .filter(moved::contains).toList();
        if (!still.isEmpty()) {
          Ec2CallFailed.call("UnassignPrivateIpAddresses", () -> ec2.unassignPrivateIpAddresses(r -> r
              .networkInterfaceId(eni.networkInterfaceId()).privateIpAddresses(strings(still))));
        }
      }
    } catch (Ec2CallFailed f) {
      // The move itself succeeded; the old ENI (gone with its instance, say) is looked at again later.
      LOG.info("after moving {}: {} ({})", movedFrom, f.describe(), f.code);
    }
  }

  private void detachFrom(String node, List<Integer> idx, List<AddressChange> changes,
      AddressChangeResult[] results) {
    NodeEni source = describedOrFail(node, idx, changes, results);
    if (source == null) {
      return;
    }
    Map<Ip, Integer> pending = new LinkedHashMap<>();
    for (int i : idx) {
      Ip ip = changes.get(i).address();
      if (!source.secondaries().contains(ip)) {
        results[i] = AddressChangeResult.applied(changes.get(i)); // gone already
      } else if (!source.owns(ip)) {
        results[i] = AddressChangeResult.skipped(changes.get(i), ip + " on " + source.where()
            + " was not attached by this operator: left alone");
      } else {
        pending.put(ip, i);
      }
    }
    List<Ip> v4 = pending.keySet().stream().filter(Ip::isIPv4).toList();
    List<Ip> v6 = pending.keySet().stream().filter(ip -> !ip.isIPv4()).toList();
    Batch batch = new Batch(source, pending, changes, results);
    List<Ip> done = new ArrayList<>();
    done.addAll(run(batch, v4, () -> ec2.unassignPrivateIpAddresses(r -> r
        .networkInterfaceId(source.eniId()).privateIpAddresses(strings(v4))), "UnassignPrivateIpAddresses"));
    done.addAll(run(batch, v6, () -> ec2.unassignIpv6Addresses(r -> r
        .networkInterfaceId(source.eniId()).ipv6Addresses(strings(v6))), "UnassignIpv6Addresses"));
    if (!done.isEmpty()) {
      source.secondaries().removeAll(done);
      ownership.disownQuietly(source, done);
    }
  }

  private static AddressChangeResult failed(AddressChange c, Ec2CallFailed f, NodeEni on) {
    return AddressChangeResult.failed(c, f.code, f.call + " on " + on.where() + ": " + f.getMessage(), f.retryable);
  }

  private static List<String> strings(List<Ip> ips) {
    return ips.stream().sorted(Comparator.naturalOrder()).map(Ip::toString).collect(Collectors.toList());
  }
}
