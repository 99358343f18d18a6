package org.ipamoperators.cloud.azure;

import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceIpConfigurationInner;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;

/**
 * The decision of one NIC's update, without I/O: of the removals and additions wanted on the NIC,
 * which go into its PUT and which are settled without it (already done, another tool's to leave
 * alone, refused), from the ipConfigurations as last read. {@link NicEdit} then builds the body.
 */
final class NicChanges {
  private final List<AddressChange> changes;
  private final Map<Ip, Integer> removes;
  private final Map<Ip, Integer> adds;
  private final String where;
  private final int perNic;

  /**
   * @param changes the pass's changes, indexed by the values of {@code removes} and {@code adds}
   * @param where the NIC as named in messages
   * @param perNic how many ipConfigurations Azure allows on one NIC, the primary included
   */
  NicChanges(List<AddressChange> changes, Map<Ip, Integer> removes, Map<Ip, Integer> adds, String where, int perNic) {
    this.changes = changes;
    this.removes = removes;
    this.adds = adds;
    this.where = where;
    this.perNic = perNic;
  }

  /**
   * What one PUT carries ({@code remove}, {@code add}), the results settled without it (by index of
   * the change), the moved-away addresses that are already off the NIC, and every address on the NIC
   * as read.
   */
  record Decision(Set<Ip> remove, Set<Ip> add, Map<Integer, AddressChangeResult> results, Set<Ip> alreadyGone,
      Set<Ip> onNic) {}

  /**
   * The failure of an addition no PUT could make (no IPv6 prefix, outside the subnet, one of the
   * five addresses Azure reserves), so it fails alone instead of failing the NIC's whole PUT.
   */
  static Optional<AddressChangeResult> unplaceable(Ip ip, AddressChange c, List<IpRange> blocks, String subnetId,
      String where) {
    if (!ip.isIPv4() && blocks.stream().allMatch(b -> b.family() != ip.family())) {
      return Optional.of(AddressChangeResult.failed(c, "SubnetHasNoIpv6", "the subnet of " + where
          + " has no IPv6 prefix", false));
    }
    Optional<IpRange> block = blocks.stream().filter(b -> b.family() == ip.family() && b.contains(ip)).findFirst();
    if (block.isEmpty()) {
      return Optional.of(AddressChangeResult.failed(c, "PrivateIPAddressNotInSubnet", ip + " is outside the subnet "
          + AzureIds.last(subnetId) + " " + blocks + " of " + where, false));
    }
    if (reserved(block.get()).contains(ip)) {
      return Optional.of(AddressChangeResult.failed(c, "PrivateIPAddressInReservedRange", ip + " is one of the "
          + "five addresses Azure reserves in " + block.get(), false));
    }
    return Optional.empty();
  }

  /** The five addresses Azure reserves in a subnet prefix: the first four and the last. */
  static Set<Ip> reserved(IpRange block) {
    Set<Ip> out = new TreeSet<>();
    Ip ip = block.first();
    for (int i = 0; i < 4; i++, ip = ip.next()) {
      out.add(ip);
    }
    out.add(block.last());
    return out;
  }

  /**
   * Whether the NIC as last seen differs from what the changes want: an addition missing, a
   * removal of this operator's configuration still there, or this operator's configuration of an
   * addition in other pools than {@code pools}.
   */
  boolean wouldChange(List<NetworkInterfaceIpConfigurationInner> cfgs, List<String> pools) {
    Map<Ip, NetworkInterfaceIpConfigurationInner> byIp = byAddress(cfgs);
    if (adds.keySet().stream().anyMatch(ip -> !byIp.containsKey(ip))) {
      return true;
    }
    if (removes.keySet().stream().anyMatch(ip -> byIp.containsKey(ip) && NicEdit.owned(byIp.get(ip)))) {
      return true;
    }
    Set<String> want = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    want.addAll(pools);
    return adds.keySet().stream().map(byIp::get).anyMatch(c -> c.name() != null && NicEdit.address(c)
        .map(ip -> c.name().equalsIgnoreCase(NicEdit.ownedName(ip))).orElse(false) && !NicEdit.poolIds(c).equals(want));
  }

  /**
   * The decision for the NIC's configurations as read. Additions already failed ({@code earlier},
   * read only) or dropped after a conflict are left out; only this operator's configurations are
   * removed or reused; new ones beyond the NIC's limit fail.
   */
  Decision decide(List<NetworkInterfaceIpConfigurationInner> cfgs, AddressChangeResult[] earlier, Set<Ip> dropped) {
    Map<Ip, NetworkInterfaceIpConfigurationInner> byIp = byAddress(cfgs);
    Map<Integer, AddressChangeResult> results = new HashMap<>();
    Set<Ip> gone = new TreeSet<>();
    Set<Ip> toRemove = removals(cfgs, byIp, earlier, results, gone);
    Set<Ip> toAdd = additions(cfgs, byIp, earlier, dropped, results);
    long after = cfgs.stream().filter(c -> NicEdit.address(c).map(ip -> !toRemove.contains(ip)).orElse(true)).count();
    int room = (int) Math.max(0, perNic - after);
    List<Ip> newOnes = toAdd.stream().filter(ip -> !byIp.containsKey(ip)).toList();
    for (Ip ip : newOnes.subList(Math.min(room, newOnes.size()), newOnes.size())) {
      int i = adds.get(ip);
      results.put(i, AddressChangeResult.failed(changes.get(i), "NicIpConfigurationLimit", where + " already has "
          + after + " ipConfigurations; Azure allows " + perNic, false));
      toAdd.remove(ip);
    }
    return new Decision(toRemove, toAdd, results, gone, Set.copyOf(byIp.keySet()));
  }

  /** Removals: only this operator's configurations; other tools' are left alone, absent ones are done. */
  private Set<Ip> removals(List<NetworkInterfaceIpConfigurationInner> cfgs,
      Map<Ip, NetworkInterfaceIpConfigurationInner> byIp, AddressChangeResult[] earlier,
      Map<Integer, AddressChangeResult> results, Set<Ip> gone) {
    Set<Ip> toRemove = new TreeSet<>();
    for (var e : removes.entrySet()) {
      NetworkInterfaceIpConfigurationInner c = byIp.get(e.getKey());
      AddressChange ch = changes.get(e.getValue());
      if (c == null) {
        if (earlier[e.getValue()] == null && ch.kind() == AddressChange.Kind.DETACH) {
          results.put(e.getValue(), AddressChangeResult.applied(ch));
        }
        if (ch.kind() == AddressChange.Kind.MOVE) {
          gone.add(e.getKey());
        }
      } else if (!NicEdit.owned(c) || NicEdit.isPrimary(c, cfgs.size())) {
        results.put(e.getValue(), ch.kind() == AddressChange.Kind.DETACH
            ? AddressChangeResult.skipped(ch, e.getKey() + " on " + where + " is in ipConfiguration "
            + c.name() + ", which this operator did not create: left alone")
            : AddressChangeResult.failed(ch, "AddressInUse", e.getKey() + " on " + where
            + " is in ipConfiguration " + c.name() + ", which this operator did not create: not moved", false));
      } else {
        toRemove.add(e.getKey());
      }
    }
    return toRemove;
  }

  /** Additions: an address another tool's configuration on this NIC holds is refused. */
  private Set<Ip> additions(List<NetworkInterfaceIpConfigurationInner> cfgs,
      Map<Ip, NetworkInterfaceIpConfigurationInner> byIp, AddressChangeResult[] earlier, Set<Ip> dropped,
      Map<Integer, AddressChangeResult> results) {
    Set<Ip> toAdd = new TreeSet<>();
    for (var e : adds.entrySet()) {
      if (dropped.contains(e.getKey()) || earlier[e.getValue()] != null
          && earlier[e.getValue()].outcome() == AddressChangeResult.Outcome.FAILED) {
        continue;
      }
      NetworkInterfaceIpConfigurationInner c = byIp.get(e.getKey());
      if (c != null && (!NicEdit.owned(c) || NicEdit.isPrimary(c, cfgs.size()))) {
        results.put(e.getValue(), AddressChangeResult.failed(changes.get(e.getValue()), "AddressInUse", e.getKey()
            + " is in ipConfiguration " + c.name() + " of " + where + ", which this operator did not create: "
            + "left alone", false));
        continue;
      }
      toAdd.add(e.getKey());
    }
    return toAdd;
  }

  private static Map<Ip, NetworkInterfaceIpConfigurationInner> byAddress(List<NetworkInterfaceIpConfigurationInner> cfgs) {
    Map<Ip, NetworkInterfaceIpConfigurationInner> byIp = new LinkedHashMap<>();
    cfgs.forEach(c -> NicEdit.address(c).ifPresent(ip -> byIp.put(ip, c)));
    return byIp;
  }
}
