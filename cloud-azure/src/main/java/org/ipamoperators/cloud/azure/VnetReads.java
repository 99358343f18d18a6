package org.ipamoperators.cloud.azure;

import com.azure.core.util.Context;
import com.azure.resourcemanager.network.fluent.models.IpConfigurationInner;
import com.azure.resourcemanager.network.fluent.models.SubnetInner;
import com.azure.resourcemanager.network.fluent.models.VirtualNetworkInner;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.NodeNetworkException;

/**
 * The reads of VNets: which addresses the subnets of a range hold ({@link AzureNodeNetwork#addressesInUse}), and
 * who holds an address a PUT was refused.
 */
final class VnetReads {
  private final ArmAccess arm;

  VnetReads(ArmAccess arm) {
    this.arm = arm;
  }

  /** {@link AzureNodeNetwork#addressesInUse}: never an empty or partial set, a failure instead. */
  Set<Ip> addressesInUse(IpRange range) throws NodeNetworkException {
    try {
      List<String> holding = vnetsOverlapping(range);
      if (holding.isEmpty()) {
        String rg = arm.settings().vnetResourceGroup();
        throw new ArmCallFailed("ListVirtualNetworks", 200, "NoSubnetForCidr", "no subnet of "
            + (rg == null ? "the subscription" : "resource group " + rg) + " holds or overlaps " + range, false);
      }
      Set<Ip> used = new TreeSet<>();
      for (String vnetId : holding) {
        addInUse(vnetId, range, used);
      }
      used.removeIf(ip -> !range.contains(ip));
      return used;
    } catch (ArmCallFailed f) {
      throw new NodeNetworkException(range.toString(), f.code, f.describe(), f.retryable, f);
    }
  }

  /**
   * Which VNets have a subnet overlapping the range: the listing is cached (subnets rarely change)
   * and made again when it names none; what the subnets hold is always read fresh.
   */
  private List<String> vnetsOverlapping(IpRange range) {
    AzureNetworkState.VnetList listed = arm.state().vnetList;
    List<String> holding = listed == null || !arm.state().clock.instant().isBefore(listed.expires()) ? List.of()
        : overlapping(listed.vnets(), range);
    if (!holding.isEmpty()) {
      return holding;
    }
    String rg = arm.settings().vnetResourceGroup();
    List<VirtualNetworkInner> vnets = arm.call("ListVirtualNetworks", () -> (rg == null
        ? arm.clients().network().getVirtualNetworks().list()
        : arm.clients().network().getVirtualNetworks().listByResourceGroup(rg)).stream().toList());
    Map<String, List<IpRange>> byId = new LinkedHashMap<>();
    for (VirtualNetworkInner v : vnets) {
      List<IpRange> all = new ArrayList<>();
      (v.subnets() == null ? List.<SubnetInner>of() : v.subnets()).forEach(s -> all.addAll(NicReads.prefixes(s)));
      byId.put(v.id(), all);
    }
    Instant expires = arm.state().clock.instant().plus(AzureNetworkState.SUBNET_TTL);
    arm.state().vnetList = new AzureNetworkState.VnetList(byId, expires);
    return overlapping(byId, range);
  }

  /** Adds what the VNet's subnets overlapping the range hold: Azure's reserves and every ipConfiguration. */
  private void addInUse(String vnetId, IpRange range, Set<Ip> used) {
    AzureIds.Id id = AzureIds.parse(vnetId).orElseThrow();
    VirtualNetworkInner full = arm.call("GetVirtualNetwork", () -> arm.clients().network().getVirtualNetworks()
        .getByResourceGroupWithResponse(id.resourceGroup(), id.name(), "subnets/ipConfigurations", Context.NONE)
        .getValue());
    for (SubnetInner s : full.subnets() == null ? List.<SubnetInner>of() : full.subnets()) {
      List<IpRange> blocks = NicReads.prefixes(s).stream()
          .filter(b -> b.family() == range.family() && b.overlaps(range)).toList();
      if (blocks.isEmpty()) {
        continue;
      }
      blocks.forEach(b -> used.addAll(NicChanges.reserved(b)));
      for (IpConfigurationInner c : s.ipConfigurations() == null ? List.<IpConfigurationInner>of()
          : s.ipConfigurations()) {
        if (c.privateIpAddress() == null) {
          throw new ArmCallFailed("GetVirtualNetwork", 200, "AddressNotExpanded", "subnet " + s.name()
              + " lists " + c.id() + " without its address: what it holds is unknown", true);
        }
        used.add(Ip.parse(c.privateIpAddress()));
      }
    }
  }

  private static List<String> overlapping(Map<String, List<IpRange>> vnets, IpRange range) {
    return vnets.entrySet().stream().filter(e -> e.getValue().stream()
        .anyMatch(b -> b.family() == range.family() && b.overlaps(range))).map(Map.Entry::getKey).toList();
  }

  /** The candidates Azure says are not available, each with the id of what holds it when one is listed. */
  Map<Ip, Optional<String>> takenAddresses(String subnetId, List<Ip> candidates) {
    Matcher m = NicReads.SUBNET_ID.matcher(subnetId);
    if (!m.matches() || candidates.isEmpty()) {
      return Map.of();
    }
    String rg = m.group(1);
    String vnet = m.group(2);
    List<Ip> taken = new ArrayList<>();
    for (Ip ip : candidates) {
      var answer = arm.call("CheckIPAddressAvailability", () -> arm.clients().network().getVirtualNetworks()
          .checkIpAddressAvailability(rg, vnet, ip.toString()));
      if (answer == null || !Boolean.TRUE.equals(answer.available())) {
        taken.add(ip);
      }
    }
    if (taken.isEmpty()) {
      return Map.of();
    }
    VirtualNetworkInner full = arm.call("GetVirtualNetwork", () -> arm.clients().network().getVirtualNetworks()
        .getByResourceGroupWithResponse(rg, vnet, "subnets/ipConfigurations", Context.NONE).getValue());
    Map<Ip, String> holders = new HashMap<>();
    for (SubnetInner sub : full.subnets() == null ? List.<SubnetInner>of() : full.subnets()) {
      for (IpConfigurationInner c : sub.ipConfigurations() == null ? List.<IpConfigurationInner>of()
          : sub.ipConfigurations()) {
        if (c.privateIpAddress() != null && c.id() != null) {
          holders.put(Ip.parse(c.privateIpAddress()), c.id());
        }
      }
    }
    Map<Ip, Optional<String>> out = new LinkedHashMap<>();
    taken.forEach(ip -> out.put(ip, Optional.ofNullable(holders.get(ip))));
    return out;
  }
}
