package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How tests seed the resources ({@link ArmServer}'s seeding methods describe each), straight into
 * the state, past the HTTP checks. Callers hold the state's monitor.
 */
final class ArmSeeding {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  private final ArmState state;

  ArmSeeding(ArmState state) {
    this.state = state;
  }

  String vnet(String rg, String name, String... addressPrefixes) {
    Vnet v = new Vnet(state.subscription, rg, name, List.of(addressPrefixes));
    state.vnets.put(v.id().toLowerCase(Locale.ROOT), v);
    return v.id();
  }

  String subnet(String vnetId, String name, String... prefixes) {
    Vnet v = state.vnets.get(vnetId.toLowerCase(Locale.ROOT));
    Subnet s = new Subnet(v, name, Arrays.stream(prefixes).map(Cidr::parse).toList());
    v.subnets.put(name.toLowerCase(Locale.ROOT), s);
    return s.id();
  }

  String loadBalancer(String rg, String name, List<String> pools, List<String> outboundRulePools) {
    LoadBalancer lb = new LoadBalancer(state.subscription, rg, name);
    pools.forEach(p -> lb.pools.put(p.toLowerCase(Locale.ROOT), p));
    outboundRulePools.forEach(p -> lb.outbound.add(p.toLowerCase(Locale.ROOT)));
    state.lbs.put(lb.id().toLowerCase(Locale.ROOT), lb);
    return lb.id();
  }

  String networkSecurityGroup(String rg, String name) {
    String id = "/subscriptions/" + state.subscription + "/resourceGroups/" + rg
        + "/providers/Microsoft.Network/networkSecurityGroups/" + name;
    state.nsgs.put(id.toLowerCase(Locale.ROOT), id);
    return id;
  }

  void nicSettings(String nicId, String nsgId, List<String> dnsServers, boolean acceleratedNetworking,
      boolean ipForwarding, Map<String, String> tags) {
    Nic nic = state.nic(nicId);
    nic.nsgId = nsgId;
    nic.dnsServers = List.copyOf(dnsServers);
    nic.acceleratedNetworking = acceleratedNetworking;
    nic.ipForwarding = ipForwarding;
    nic.tags = F.objectNode();
    tags.forEach(nic.tags::put);
    nic.etag = ArmState.newEtag();
  }

  void loadBalancerFrontend(String lbId, String name, String subnetId, String ip) {
    state.lbs.get(lbId.toLowerCase(Locale.ROOT)).frontends.add(new LoadBalancer.Frontend(name, subnetId, ip));
  }

  void holder(String id, String subnetId, String ip) {
    state.otherHolders.add(new ArmState.SeededHolder(id, subnetId, ip));
  }

  String vm(String rg, String name, String subnetId, String primaryIp, List<String> poolIds) {
    Subnet s = subnetOrFail(subnetId);
    Nic nic = new Nic(state.subscription, rg, name + "-nic");
    Vm vm = new Vm(state.subscription, rg, name);
    nic.vmId = vm.id();
    String ip = primaryIp != null ? primaryIp : state.nextFree(s, s.prefixes.get(0).v4(), nic, List.of())
        .orElseThrow();
    ObjectNode props = addPrimaryConfig(nic, ip, s);
    ArrayNode pools = props.putArray("loadBalancerBackendAddressPools");
    poolIds.forEach(p -> pools.addObject().put("id", p));
    vm.nics.add(nic.id());
    state.vms.put(vm.id().toLowerCase(Locale.ROOT), vm);
    return vm.id();
  }

  String flexibleScaleSetVm(String rg, String scaleSet, String name, String subnetId) {
    String id = vm(rg, name, subnetId, null, List.of());
    state.vms.get(id.toLowerCase(Locale.ROOT)).scaleSet = "/subscriptions/" + state.subscription + "/resourceGroups/"
        + rg + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + scaleSet;
    return id;
  }

  String uniformScaleSetVm(String rg, String scaleSet, String instanceId, String subnetId) {
    Subnet s = subnetOrFail(subnetId);
    String vmId = "/subscriptions/" + state.subscription + "/resourceGroups/" + rg
        + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + scaleSet + "/virtualMachines/" + instanceId;
    Nic nic = new Nic(state.subscription, rg, scaleSet + "-nic");
    nic.scaleSetVmId = vmId;
    nic.vmId = vmId;
    addPrimaryConfig(nic, state.nextFree(s, true, nic, List.of()).orElseThrow(), s);
    state.scaleSetVms.put(vmId.toLowerCase(Locale.ROOT), new ScaleSetInstance(vmId, nic.id(),
        scaleSet + "_" + instanceId));
    return vmId;
  }

  String secondNic(String vmId, String subnetId) {
    Vm vm = state.vms.get(vmId.toLowerCase(Locale.ROOT));
    Subnet s = state.subnet(subnetId).orElseThrow();
    Nic nic = new Nic(state.subscription, vm.rg, vm.name + "-nic" + (vm.nics.size() + 1));
    nic.vmId = vm.id();
    addPrimaryConfig(nic, state.nextFree(s, true, nic, List.of()).orElseThrow(), s);
    vm.nics.add(0, nic.id()); // listed first, but not primary
    vm.primaryFlagged = true;
    return nic.id();
  }

  void seedIpConfiguration(String nicId, String name, String ip, String subnetId, ObjectNode extraProperties) {
    Nic nic = state.nic(nicId);
    ObjectNode cfg = F.objectNode().put("name", name);
    ObjectNode props = cfg.putObject("properties");
    if (extraProperties != null) {
      props.setAll(extraProperties);
    }
    props.put("primary", false).put("privateIPAddress", ip).put("privateIPAllocationMethod", "Static")
        .put("privateIPAddressVersion", ip.contains(":") ? "IPv6" : "IPv4");
    props.putObject("subnet").put("id", subnetId);
    nic.configs.add(cfg);
    nic.etag = ArmState.newEtag();
  }

  void deleteVm(String vmId) {
    Vm vm = state.vms.remove(vmId.toLowerCase(Locale.ROOT));
    if (vm != null) {
      vm.nics.forEach(n -> state.nics.remove(n.toLowerCase(Locale.ROOT)));
    }
  }

  private Subnet subnetOrFail(String subnetId) {
    return state.subnet(subnetId).orElseThrow(() -> new IllegalArgumentException("no subnet " + subnetId));
  }

  /**
   * The NIC's primary {@code ipconfig1} with a dynamic IPv4 address, stored in the state with a new
   * etag; its properties, for more.
   */
  private ObjectNode addPrimaryConfig(Nic nic, String ip, Subnet s) {
    ObjectNode cfg = F.objectNode().put("name", "ipconfig1");
    ObjectNode props = cfg.putObject("properties");
    props.put("primary", true).put("privateIPAddress", ip).put("privateIPAllocationMethod", "Dynamic")
        .put("privateIPAddressVersion", "IPv4");
    props.putObject("subnet").put("id", s.id());
    nic.configs.add(cfg);
    nic.etag = ArmState.newEtag();
    state.nics.put(nic.id().toLowerCase(Locale.ROOT), nic);
    return props;
  }
}
