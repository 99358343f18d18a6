package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.UUID;

/** The resources as ARM's GETs show them: ids, types, etags, read-only fields and the views derived from the NICs. */
final class ArmJson {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  private final ArmState state;

  ArmJson(ArmState state) {
    this.state = state;
  }

  ObjectNode vm(Vm vm) {
    ObjectNode o = F.objectNode().put("name", vm.name).put("id", vm.id()).put("type", "Microsoft.Compute/virtualMachines")
        .put("location", state.location);
    ObjectNode props = o.putObject("properties").put("vmId", UUID.nameUUIDFromBytes(vm.id().getBytes(StandardCharsets.UTF_8))
        .toString()).put("provisioningState", "Succeeded");
    props.putObject("osProfile").put("computerName", vm.name);
    props.putObject("hardwareProfile").put("vmSize", "Standard_D2s_v3");
    if (vm.scaleSet != null) {
      props.putObject("virtualMachineScaleSet").put("id", vm.scaleSet);
    }
    ArrayNode refs = props.putObject("networkProfile").putArray("networkInterfaces");
    String primary = vm.primaryNic();
    for (String n : vm.nics) {
      ObjectNode r = refs.addObject().put("id", n);
      if (vm.nics.size() > 1 || vm.primaryFlagged) {
        r.putObject("properties").put("primary", n.equals(primary));
      }
    }
    return o;
  }

  /** A Uniform scale set's instance ({@code instanceId} as the path gave it). */
  ObjectNode scaleSetInstance(ScaleSetInstance vm, String instanceId) {
    ObjectNode o = F.objectNode().put("name", vm.name()).put("id", vm.id()).put("instanceId", instanceId)
        .put("type", "Microsoft.Compute/virtualMachineScaleSets/virtualMachines").put("location", state.location);
    ObjectNode props = o.putObject("properties").put("provisioningState", "Succeeded")
        .put("latestModelApplied", true);
    props.putObject("osProfile").put("computerName", vm.name());
    props.putObject("networkProfile").putArray("networkInterfaces").addObject().put("id", vm.nicId())
        .putObject("properties").put("primary", true);
    return o;
  }

  ObjectNode nic(Nic nic) {
    ObjectNode o = F.objectNode().put("name", nic.name).put("id", nic.id()).put("etag", nic.etag)
        .put("type", "Microsoft.Network/networkInterfaces").put("location", state.location);
    o.set("tags", nic.tags.deepCopy());
    ObjectNode props = o.putObject("properties").put("provisioningState", nic.state).put("resourceGuid", nic.guid)
        .put("macAddress", "00-0D-3A-" + String.format("%02X-%02X-%02X", nic.guid.charAt(0) & 0xff,
            nic.guid.charAt(1) & 0xff, nic.guid.charAt(2) & 0xff))
        .put("primary", true).put("enableIPForwarding", nic.ipForwarding)
        .put("enableAcceleratedNetworking", nic.acceleratedNetworking).put("nicType", "Standard");
    if (nic.nsgId != null) {
      props.putObject("networkSecurityGroup").put("id", nic.nsgId);
    }
    if (nic.vmId != null) {
      props.putObject("virtualMachine").put("id", nic.vmId);
      Vm vm = state.vms.get(nic.vmId.toLowerCase(Locale.ROOT));
      props.put("primary", vm == null ? nic.scaleSetVmId != null : vm.primaryNic().equalsIgnoreCase(nic.id()));
    }
    ObjectNode dns = props.putObject("dnsSettings");
    nic.dnsServers.forEach(dns.putArray("dnsServers")::add);
    nic.dnsServers.forEach(dns.putArray("appliedDnsServers")::add);
    ArrayNode cfgs = props.putArray("ipConfigurations");
    nic.configs.forEach(c -> cfgs.add(config(nic, c)));
    return o;
  }

  /** A stored ipConfiguration with its id, the NIC's etag, type and provisioning state. */
  ObjectNode config(Nic nic, ObjectNode stored) {
    ObjectNode c = F.objectNode().put("name", stored.get("name").asText())
        .put("id", nic.id() + "/ipConfigurations/" + stored.get("name").asText()).put("etag", nic.etag)
        .put("type", "Microsoft.Network/networkInterfaces/ipConfigurations");
    ObjectNode props = stored.get("properties").deepCopy();
    props.put("provisioningState", nic.state);
    c.set("properties", props);
    return c;
  }

  ObjectNode vnet(Vnet v, boolean expand) {
    ObjectNode o = F.objectNode().put("name", v.name).put("id", v.id()).put("etag", "W/\"" + UUID.nameUUIDFromBytes(
        v.id().getBytes(StandardCharsets.UTF_8)) + "\"").put("type", "Microsoft.Network/virtualNetworks")
        .put("location", state.location);
    ObjectNode props = o.putObject("properties").put("provisioningState", "Succeeded");
    ArrayNode space = props.putObject("addressSpace").putArray("addressPrefixes");
    v.prefixes.forEach(space::add);
    ArrayNode subnets = props.putArray("subnets");
    v.subnets.values().forEach(s -> subnets.add(subnet(s, expand)));
    return o;
  }

  ObjectNode subnet(Subnet s, boolean expand) {
    ObjectNode o = F.objectNode().put("name", s.name).put("id", s.id()).put("etag", "W/\"" + UUID.nameUUIDFromBytes(
        s.id().getBytes(StandardCharsets.UTF_8)) + "\"").put("type", "Microsoft.Network/virtualNetworks/subnets");
    ObjectNode props = o.putObject("properties").put("provisioningState", "Succeeded");
    if (s.prefixes.size() == 1) {
      props.put("addressPrefix", s.prefixes.get(0).text());
    } else {
      ArrayNode ps = props.putArray("addressPrefixes");
      s.prefixes.forEach(c -> ps.add(c.text()));
    }
    ArrayNode cfgs = props.putArray("ipConfigurations");
    for (ArmState.Holding h : state.holdersIn(s)) {
      // Azure upper-cases these references
      ObjectNode ref = cfgs.addObject().put("id", h.id().toUpperCase(Locale.ROOT));
      if (expand) {
        ref.putObject("properties").put("privateIPAddress", h.ip()).put("provisioningState", "Succeeded");
      }
    }
    if (cfgs.isEmpty()) {
      props.remove("ipConfigurations");
    }
    return o;
  }

  ObjectNode pool(LoadBalancer lb, String pool) {
    ObjectNode o = F.objectNode().put("name", pool).put("id", lb.id() + "/backendAddressPools/" + pool)
        .put("etag", "W/\"" + UUID.randomUUID() + "\"").put("type", "Microsoft.Network/loadBalancers/backendAddressPools");
    ObjectNode props = o.putObject("properties").put("provisioningState", "Succeeded");
    ArrayNode members = props.putArray("backendIPConfigurations");
    state.backendIpConfigurations(lb, pool).forEach(id -> members.addObject().put("id", id));
    if (lb.outbound.contains(pool.toLowerCase(Locale.ROOT))) {
      props.putObject("outboundRule").put("id", lb.id() + "/outboundRules/outbound-rule-v4");
      props.putArray("outboundRules").addObject().put("id", lb.id() + "/outboundRules/outbound-rule-v4");
    }
    return o;
  }

  ObjectNode loadBalancer(LoadBalancer lb) {
    ObjectNode o = F.objectNode().put("name", lb.name).put("id", lb.id()).put("type", "Microsoft.Network/loadBalancers")
        .put("location", state.location).put("etag", "W/\"" + UUID.randomUUID() + "\"");
    o.putObject("sku").put("name", "Standard");
    ObjectNode props = o.putObject("properties").put("provisioningState", "Succeeded");
    ArrayNode fes = props.putArray("frontendIPConfigurations");
    for (LoadBalancer.Frontend fe : lb.frontends) {
      ObjectNode f = fes.addObject().put("name", fe.name()).put("id", lb.id() + "/frontendIPConfigurations/" + fe.name());
      ObjectNode fp = f.putObject("properties").put("privateIPAddress", fe.ip()).put("privateIPAllocationMethod", "Static");
      fp.putObject("subnet").put("id", fe.subnetId());
    }
    ArrayNode pools = props.putArray("backendAddressPools");
    lb.pools.values().forEach(p -> pools.add(pool(lb, p)));
    ArrayNode rules = props.putArray("outboundRules");
    if (!lb.outbound.isEmpty()) {
      rules.addObject().put("name", "outbound-rule-v4").put("id", lb.id() + "/outboundRules/outbound-rule-v4");
    }
    props.putArray("loadBalancingRules");
    props.putArray("probes");
    props.putArray("inboundNatRules");
    return o;
  }
}
