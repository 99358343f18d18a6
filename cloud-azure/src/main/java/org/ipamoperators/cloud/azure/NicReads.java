package org.ipamoperators.cloud.azure;

import com.azure.resourcemanager.compute.fluent.models.VirtualMachineInner;
import com.azure.resourcemanager.compute.models.NetworkInterfaceReference;
import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceInner;
import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceIpConfigurationInner;
import com.azure.resourcemanager.network.fluent.models.SubnetInner;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;

/**
 * The reads behind {@link AzureNodeNetwork#describe}: a node's VM (or Uniform scale-set instance), its primary NIC
 * and that NIC's subnet, kept in the shared state for the PUTs of later passes.
 */
final class NicReads {
  static final Pattern SUBNET_ID = Pattern.compile(
      "^/subscriptions/[^/]+/resourceGroups/([^/]+)/providers/Microsoft\\.Network/virtualNetworks/([^/]+)/subnets/([^/]+)$",
      Pattern.CASE_INSENSITIVE);

  private final ArmAccess arm;

  NicReads(ArmAccess arm) {
    this.arm = arm;
  }

  NodeAttachment describe(NodeRef node) throws NodeNetworkException {
    if (AzureIds.isScaleSet(node.providerId())) {
      return describeUniformInstance(node);
    }
    AzureIds.Id vm = AzureIds.vmOfProviderId(node.providerId()).orElseThrow(() -> new NodeNetworkException(node.name(),
        "InvalidProviderID", "spec.providerID '" + node.providerId() + "' names no Azure VM (expected azure:///"
        + "subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<name>)", false, null));
    try {
      VirtualMachineInner v = arm.call("GetVirtualMachine", () -> arm.clients().compute().getVirtualMachines()
          .getByResourceGroup(vm.resourceGroup(), vm.name()));
      List<NetworkInterfaceReference> refs = v.networkProfile() == null || v.networkProfile().networkInterfaces() == null
          ? List.of() : v.networkProfile().networkInterfaces();
      NetworkInterfaceReference primaryRef = refs.size() == 1 ? refs.get(0) : refs.stream()
          .filter(r -> Boolean.TRUE.equals(r.primary())).findFirst().orElseThrow(() -> new ArmCallFailed(
              "GetVirtualMachine", 200, "NoPrimaryNetworkInterface", "VM " + vm.name() + " has " + refs.size()
              + " network interfaces and none is primary", false));
      AzureIds.Id nicId = AzureIds.parse(primaryRef.id()).orElseThrow(() -> new ArmCallFailed("GetVirtualMachine", 200,
          "InvalidResourceId", "VM " + vm.name() + " names NIC '" + primaryRef.id() + "'", false));
      NetworkInterfaceInner nic = arm.getNic(nicId);
      NetworkInterfaceIpConfigurationInner primary = primaryConfig(nic).orElseThrow(() -> new ArmCallFailed(
          "GetNetworkInterface", 200, "NoPrimaryIpConfiguration", "NIC " + nicId.name() + " has no primary "
          + "ipConfiguration", false));
      String subnetId = primary.subnet() == null ? null : primary.subnet().id();
      if (subnetId == null) {
        throw new ArmCallFailed("GetNetworkInterface", 200, "NoSubnet", "the primary ipConfiguration of NIC "
            + nicId.name() + " names no subnet", false);
      }
      List<IpRange> blocks = subnetBlocks(subnetId);
      NicState state = new NicState(node.name(), v.id() == null ? vm.id() : v.id(), nicId, subnetId, blocks, nic);
      arm.state().nodes.put(node.name(), state);
      return attachment(state);
    } catch (ArmCallFailed f) {
      arm.state().nodes.remove(node.name());
      throw new NodeNetworkException(node.name(), f.code, f.call + " for VM " + vm.name() + ": " + f.getMessage(),
          f.retryable, f);
    }
  }

  /**
   * A Uniform scale set's instance: its NIC, read under the instance, is described (addresses,
   * subnet) with no room, because its configurations come from the scale set's model and no NIC
   * PUT can change them. (A Flexible scale set's VMs are ordinary VMs: the providerID names them
   * as such and they are handled like any VM.)
   */
  private NodeAttachment describeUniformInstance(NodeRef node) throws NodeNetworkException {
    AzureIds.ScaleSetVm vm = AzureIds.scaleSetVmOfProviderId(node.providerId()).orElseThrow(() ->
        new NodeNetworkException(node.name(), "InvalidProviderID", "spec.providerID '" + node.providerId()
            + "' names no scale-set instance (expected azure:///subscriptions/<sub>/resourceGroups/<rg>/providers/"
            + "Microsoft.Compute/virtualMachineScaleSets/<set>/virtualMachines/<instance>)", false, null));
    try {
      var v = arm.call("GetVirtualMachineScaleSetVM", () -> arm.clients().compute().getVirtualMachineScaleSetVMs()
          .get(vm.resourceGroup(), vm.scaleSet(), vm.instanceId()));
      List<NetworkInterfaceReference> refs = v.networkProfile() == null || v.networkProfile().networkInterfaces() == null
          ? List.of() : v.networkProfile().networkInterfaces();
      NetworkInterfaceReference primaryRef = refs.size() == 1 ? refs.get(0) : refs.stream()
          .filter(r -> Boolean.TRUE.equals(r.primary())).findFirst().orElseThrow(() -> new ArmCallFailed(
              "GetVirtualMachineScaleSetVM", 200, "NoPrimaryNetworkInterface", "instance " + vm.instanceId()
              + " of scale set " + vm.scaleSet() + " has " + refs.size() + " network interfaces and none is primary",
              false));
      AzureIds.Id nicId = vm.nic(AzureIds.last(primaryRef.id()));
      NetworkInterfaceInner nic = arm.call("GetNetworkInterface", () -> arm.clients().network().getNetworkInterfaces()
          .getVirtualMachineScaleSetNetworkInterface(vm.resourceGroup(), vm.scaleSet(), vm.instanceId(), nicId.name()));
      String subnetId = primaryConfig(nic).map(c -> c.subnet() == null ? null : c.subnet().id()).orElseThrow(() ->
          new ArmCallFailed("GetNetworkInterface", 200, "NoSubnet", "the NIC of instance " + vm.instanceId()
              + " of scale set " + vm.scaleSet() + " has no primary ipConfiguration with a subnet", false));
      NicState state = new NicState(node.name(), vm.id(), nicId, subnetId, subnetBlocks(subnetId), nic);
      state.uniformScaleSet = true;
      arm.state().nodes.put(node.name(), state);
      return attachment(state);
    } catch (ArmCallFailed f) {
      arm.state().nodes.remove(node.name());
      throw new NodeNetworkException(node.name(), f.code, f.call + " for instance " + vm.instanceId() + " of scale set "
          + vm.scaleSet() + ": " + f.getMessage(), f.retryable, f);
    }
  }

  private NodeAttachment attachment(NicState s) {
    List<NetworkInterfaceIpConfigurationInner> cfgs = configs(s.body);
    Ip primary = null;
    Set<Ip> secondaries = ConcurrentHashMap.newKeySet();
    Set<Ip> marked = new HashSet<>();
    int foreign = 0;
    for (NetworkInterfaceIpConfigurationInner c : cfgs) {
      Optional<Ip> ip = NicEdit.address(c);
      if (NicEdit.isPrimary(c, cfgs.size())) {
        primary = ip.orElse(null);
      } else {
        ip.ifPresent(secondaries::add);
        if (!NicEdit.owned(c)) {
          foreign++;
        } else {
          ip.ifPresent(marked::add); // named as ours: the only configurations this network removes
        }
      }
    }
    // the limit counts every ipConfiguration, the primary too; other tools' take slots for good
    int capacity = s.uniformScaleSet ? 0 : Math.max(0, arm.settings().ipConfigurationsPerNic() - 1 - foreign);
    return new NodeAttachment(s.node, s.nic.id(), s.blocks, primary, secondaries, capacity, marked);
  }

  static List<NetworkInterfaceIpConfigurationInner> configs(NetworkInterfaceInner nic) {
    return nic.ipConfigurations() == null ? List.of() : nic.ipConfigurations();
  }

  static Optional<NetworkInterfaceIpConfigurationInner> primaryConfig(NetworkInterfaceInner nic) {
    List<NetworkInterfaceIpConfigurationInner> cfgs = configs(nic);
    return cfgs.stream().filter(c -> NicEdit.isPrimary(c, cfgs.size())).findFirst();
  }

  private List<IpRange> subnetBlocks(String subnetId) {
    Instant now = arm.state().clock.instant();
    String key = subnetId.toLowerCase(java.util.Locale.ROOT);
    AzureNetworkState.CachedSubnet cached = arm.state().subnets.get(key);
    if (cached != null && now.isBefore(cached.expires())) {
      return cached.blocks();
    }
    Matcher m = SUBNET_ID.matcher(subnetId);
    if (!m.matches()) {
      throw new ArmCallFailed("GetSubnet", 0, "InvalidResourceId", "not a subnet id: " + subnetId, false);
    }
    SubnetInner s = arm.call("GetSubnet", () -> arm.clients().network().getSubnets()
        .get(m.group(1), m.group(2), m.group(3)));
    List<IpRange> blocks = prefixes(s);
    arm.state().subnets.put(key, new AzureNetworkState.CachedSubnet(blocks, now.plus(AzureNetworkState.SUBNET_TTL)));
    return blocks;
  }

  static List<IpRange> prefixes(SubnetInner s) {
    List<IpRange> out = new ArrayList<>();
    if (s.addressPrefix() != null) {
      out.add(IpRange.parse(s.addressPrefix()));
    }
    if (s.addressPrefixes() != null) {
      s.addressPrefixes().stream().map(IpRange::parse).filter(r -> !out.contains(r)).forEach(out::add);
    }
    return out;
  }
}
