package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The resource types served under {@code providers}: VMs and scale-set instances, NICs (GET, and
 * PUT handed to {@link NicPut}), virtual networks with their subnets and address checks, load
 * balancers and their pools. A null answer is a path the fake does not serve. Callers hold the
 * state's monitor.
 */
final class ResourceRoutes {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  private final ArmState state;
  private final ArmJson json;
  private final AsyncOperations operations;
  private final NicPut nicPut;
  private final URI endpoint;

  ResourceRoutes(ArmState state, ArmJson json, AsyncOperations operations, NicPut nicPut, URI endpoint) {
    this.state = state;
    this.json = json;
    this.operations = operations;
    this.nicPut = nicPut;
    this.endpoint = endpoint;
  }

  /** The answer for a lower-case resource type, or null. */
  Answer serve(String type, ResourceCall r) {
    return switch (type) {
      case "virtualmachines" -> virtualMachines(r);
      case "networkinterfaces" -> networkInterfaces(r);
      case "virtualnetworks" -> virtualNetworks(r);
      case "virtualmachinescalesets" -> scaleSetVm(r.rg(), r.rest(), r.restLow());
      case "loadbalancers" -> loadBalancers(r);
      default -> null;
    };
  }

  private Answer virtualMachines(ResourceCall r) {
    if (r.rest().isEmpty()) {
      return page(state.vms.values().stream().filter(v -> r.rg() == null || v.rg.equalsIgnoreCase(r.rg()))
          .map(json::vm).toList(), r.rawPath(), r.q());
    }
    if (r.rest().size() == 1) {
      Vm vm = state.vms.get(r.rg() != null ? state.resourceKey(r.rg(), "Microsoft.Compute/virtualMachines",
          r.rest().get(0)) : r.rest().get(0).toLowerCase(Locale.ROOT));
      if (vm == null) {
        throw ArmError.notFound("Microsoft.Compute/virtualMachines", r.rest().get(0), r.rg());
      }
      return Answer.ok(json.vm(vm));
    }
    return null;
  }

  private Answer networkInterfaces(ResourceCall r) {
    if (r.rg() == null || r.rest().isEmpty()) {
      return null;
    }
    List<String> rest = r.rest();
    String key = state.resourceKey(r.rg(), "Microsoft.Network/networkInterfaces", rest.get(0));
    if ("PUT".equals(r.method())) {
      return nicPut.put(key, r.rg(), rest.get(0), r.headers(), r.body());
    }
    Nic nic = state.nics.get(key);
    if (nic == null) {
      throw ArmError.notFound("Microsoft.Network/networkInterfaces", rest.get(0), r.rg());
    }
    if (rest.size() == 1) {
      if (!ConditionalGet.check(state.settings, r.headers(), nic.etag, "network interface " + nic.name)) {
        return new Answer(304, null, Map.of("ETag", nic.etag));
      }
      operations.advanceByResourcePoll(nic);
      return new Answer(200, json.nic(nic), Map.of("ETag", nic.etag));
    }
    if ("ipconfigurations".equals(r.restLow().get(1))) {
      List<JsonNode> cfgs = nic.configs.stream().map(c -> (JsonNode) json.config(nic, c)).toList();
      if (rest.size() == 2) {
        ObjectNode out = F.objectNode();
        out.putArray("value").addAll(cfgs);
        return Answer.ok(out);
      }
      return Answer.ok(cfgs.stream().filter(c -> c.get("name").asText().equalsIgnoreCase(rest.get(2)))
          .findFirst().orElseThrow(() -> ArmError.notFound("ipConfigurations", rest.get(2), r.rg())));
    }
    return null;
  }

  private Answer virtualNetworks(ResourceCall r) {
    if (r.rest().isEmpty()) {
      return page(state.vnets.values().stream().filter(v -> r.rg() == null || v.rg.equalsIgnoreCase(r.rg()))
          .map(v -> json.vnet(v, false)).toList(), r.rawPath(), r.q());
    }
    if (r.rg() == null) {
      return null;
    }
    Vnet v = state.vnets.get(state.resourceKey(r.rg(), "Microsoft.Network/virtualNetworks", r.rest().get(0)));
    if (v == null) {
      throw ArmError.notFound("Microsoft.Network/virtualNetworks", r.rest().get(0), r.rg());
    }
    String expand = r.q().getOrDefault("$expand", "");
    if (r.rest().size() == 1) {
      return Answer.ok(json.vnet(v, expand.equalsIgnoreCase("subnets/ipConfigurations")));
    }
    switch (r.restLow().get(1)) {
      case "subnets":
        if (r.rest().size() == 2) {
          ObjectNode out = F.objectNode();
          v.subnets.values().forEach(s -> out.withArray("value").add(json.subnet(s, false)));
          out.withArray("value");
          return Answer.ok(out);
        }
        Subnet s = v.subnets.get(r.restLow().get(2));
        if (s == null) {
          throw ArmError.notFound("subnets", r.rest().get(2), r.rg());
        }
        return Answer.ok(json.subnet(s, expand.equalsIgnoreCase("ipConfigurations")));
      case "checkipaddressavailability":
        return checkIp(v, r.q().get("ipaddress"));
      case "usages":
        return usages(v);
      default:
        return null;
    }
  }

  private Answer loadBalancers(ResourceCall r) {
    if (r.rg() == null || r.rest().isEmpty()) {
      return null;
    }
    LoadBalancer lb = state.lbs.get(state.resourceKey(r.rg(), "Microsoft.Network/loadBalancers", r.rest().get(0)));
    if (lb == null) {
      throw ArmError.notFound("Microsoft.Network/loadBalancers", r.rest().get(0), r.rg());
    }
    if (r.rest().size() == 1) {
      return Answer.ok(json.loadBalancer(lb));
    }
    if (r.rest().size() == 3 && "backendaddresspools".equals(r.restLow().get(1))) {
      String pool = lb.pools.get(r.restLow().get(2));
      if (pool == null) {
        throw ArmError.notFound("backendAddressPools", r.rest().get(2), r.rg());
      }
      return Answer.ok(json.pool(lb, pool));
    }
    return null;
  }

  /** {@code …/virtualMachineScaleSets/S/virtualMachines/I} and its {@code networkInterfaces/N}. */
  private Answer scaleSetVm(String rg, List<String> rest, List<String> restLow) {
    if (rg == null || rest.size() < 3 || !"virtualmachines".equals(restLow.get(1))) {
      throw new ArmError(404, "InvalidResourceType", "The fake ARM server serves scale-set instances only");
    }
    String vmId = "/subscriptions/" + state.subscription + "/resourceGroups/" + rg
        + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + rest.get(0) + "/virtualMachines/" + rest.get(2);
    ScaleSetInstance vm = state.scaleSetVms.get(vmId.toLowerCase(Locale.ROOT));
    if (vm == null) {
      throw ArmError.notFound("Microsoft.Compute/virtualMachineScaleSets/virtualMachines", rest.get(0) + "/"
          + rest.get(2), rg);
    }
    if (rest.size() == 3) {
      return Answer.ok(json.scaleSetInstance(vm, rest.get(2)));
    }
    if (rest.size() == 5 && "networkinterfaces".equals(restLow.get(3))) {
      Nic nic = state.nics.get((vm.id() + "/networkInterfaces/" + rest.get(4)).toLowerCase(Locale.ROOT));
      if (nic == null) {
        throw ArmError.notFound("networkInterfaces", rest.get(4), rg);
      }
      return new Answer(200, json.nic(nic), Map.of("ETag", nic.etag));
    }
    throw new ArmError(404, "InvalidResourceType", "The fake ARM server does not serve " + String.join("/", rest));
  }

  private Answer checkIp(Vnet v, String ip) {
    if (ip == null || !Cidr.isAddress(ip)) {
      throw new ArmError(400, "InvalidRequestFormat", "ipAddress is required");
    }
    Subnet s = v.subnets.values().stream().filter(x -> x.prefixFor(ip).isPresent()).findFirst()
        .orElseThrow(() -> new ArmError(400, "PrivateIPAddressNotInSubnet", ip + " is in no subnet of " + v.id()));
    Cidr prefix = s.prefixFor(ip).orElseThrow();
    boolean available = !prefix.reserved(ip) && state.holderOf(ip, null).isEmpty() && !state.quarantined(ip);
    ObjectNode out = F.objectNode().put("available", available);
    if (!available) {
      ArrayNode alt = out.putArray("availableIPAddresses");
      BigInteger n = prefix.base().add(BigInteger.valueOf(4));
      while (alt.size() < 5 && n.compareTo(prefix.last()) < 0) {
        String cand = Cidr.toText(n, prefix.v4());
        if (state.holderOf(cand, null).isEmpty() && !state.quarantined(cand)) {
          alt.add(cand);
        }
        n = n.add(BigInteger.ONE);
      }
    }
    return Answer.ok(out);
  }

  private Answer usages(Vnet v) {
    ObjectNode out = F.objectNode();
    ArrayNode value = out.putArray("value");
    for (Subnet s : v.subnets.values()) {
      long limit = s.prefixes.stream().filter(Cidr::v4).mapToLong(c -> c.size().longValue() - 5).sum();
      ObjectNode u = value.addObject().put("id", s.id()).put("currentValue", state.holdersIn(s).size())
          .put("limit", limit).put("unit", "Count");
      u.putObject("name").put("value", "SubnetSpace").put("localizedValue", "Subnet size and usage");
    }
    return Answer.ok(out);
  }

  /** One page of a list, with an absolute {@code nextLink} when more follow. */
  private Answer page(List<ObjectNode> all, String rawPath, Map<String, String> q) {
    int skip = Integer.parseInt(q.getOrDefault("$skiptoken", "0"));
    int pageSize = state.settings.pageSize;
    ObjectNode out = F.objectNode();
    ArrayNode value = out.putArray("value");
    all.stream().skip(skip).limit(pageSize).forEach(value::add);
    if (skip + pageSize < all.size()) {
      out.put("nextLink", endpoint.resolve(rawPath) + "?api-version=" + q.get("api-version") + "&$skiptoken="
          + (skip + pageSize));
    }
    return Answer.ok(out);
  }
}
