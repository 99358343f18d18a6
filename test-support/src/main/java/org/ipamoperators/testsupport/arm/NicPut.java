package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A NIC PUT: the full body replaces the NIC, checked in the order Azure checks (body, preconditions,
 * primary, references, addresses), then stored with a long-running operation. Callers hold the
 * state's monitor.
 */
final class NicPut {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  private final ArmState state;
  private final AsyncOperations operations;
  private final ArmJson json;

  NicPut(ArmState state, AsyncOperations operations, ArmJson json) {
    this.state = state;
    this.operations = operations;
    this.json = json;
  }

  Answer put(String key, String rg, String name, Map<String, String> headers, String body) {
    JsonNode in = nicBody(body);
    Nic nic = state.nics.get(key);
    checkPreconditions(nic, name, headers);
    boolean create = nic == null;
    Nic target = create ? new Nic(state.subscription, rg, name) : nic;
    String nicId = target.id();
    List<ObjectNode> next = configsFromBody(in, nicId);
    checkPrimary(create ? null : target, next, nicId);
    Map<String, String> taken = new HashMap<>(); // ip -> config id within this body
    for (ObjectNode c : next) {
      resolveConfig(c, target, create, next, taken);
    }
    if (next.stream().anyMatch(c -> "IPv6".equals(c.path("properties").path("privateIPAddressVersion").asText())
        && c.path("properties").path("primary").asBoolean())) {
      throw new ArmError(400, "IPv6IpConfigurationCannotBePrimary", "the primary IP configuration of " + nicId
          + " must be IPv4.");
    }
    String nsg = in.get("properties").path("networkSecurityGroup").path("id").asText(null);
    if (nsg != null && !state.nsgs.containsKey(nsg.toLowerCase(Locale.ROOT))) {
      throw referenceNotFound(nsg, nicId);
    }
    return accept(key, target, create, in, next, taken.keySet());
  }

  private static JsonNode nicBody(String body) {
    JsonNode in;
    try {
      in = ArmServer.JSON.readTree(body);
    } catch (IOException e) {
      throw new ArmError(400, "InvalidRequestFormat", "Cannot parse the request.");
    }
    if (in == null || !in.isObject() || !in.path("properties").path("ipConfigurations").isArray()) {
      throw new ArmError(400, "InvalidRequestFormat", "Cannot parse the request.");
    }
    return in;
  }

  /** If-Match, If-None-Match and an operation still running on the NIC. */
  private void checkPreconditions(Nic nic, String name, Map<String, String> headers) {
    String ifMatch = headers.get("if-match");
    String ifNoneMatch = headers.get("if-none-match");
    if (ifMatch != null && state.settings.enforceIfMatch
        && (nic == null ? true : !"*".equals(ifMatch) && !ifMatch.equals(nic.etag))) {
      throw new ArmError(412, "PreconditionFailedEtagMismatch", "Precondition failed: the etag " + ifMatch
          + " does not match the current etag of " + name + ".");
    }
    if ("*".equals(ifNoneMatch) && nic != null) {
      throw new ArmError(412, "PreconditionFailed", "The resource " + name + " already exists.");
    }
    if (nic != null && nic.runningOperation != null) {
      throw new ArmError(409, "AnotherOperationInProgress", "Another operation on this or dependent resource is in "
          + "progress. To retrieve status of the operation use uri: " + operations.url(nic.runningOperation) + ".");
    }
  }

  /** The body's ipConfigurations as they will be stored: named, unique, with Azure's defaults, read-only fields dropped. */
  private static List<ObjectNode> configsFromBody(JsonNode in, String nicId) {
    List<ObjectNode> next = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (JsonNode c : in.path("properties").path("ipConfigurations")) {
      if (!c.isObject() || !c.path("name").isTextual() || c.path("name").asText().isBlank()) {
        throw new ArmError(400, "InvalidRequestFormat", "Cannot parse the request: an ipConfiguration has no name.");
      }
      if (!names.add(c.get("name").asText().toLowerCase(Locale.ROOT))) {
        throw new ArmError(400, "DuplicateResourceName", "Network interface " + nicId + " has two ipConfigurations named "
            + c.get("name").asText() + ".");
      }
      ObjectNode stored = F.objectNode().put("name", c.get("name").asText());
      ObjectNode props = c.path("properties").isObject() ? ((ObjectNode) c.get("properties")).deepCopy() : F.objectNode();
      props.remove("provisioningState"); // read-only input is ignored
      if (!props.has("primary")) {
        props.put("primary", false);
      }
      if (!props.has("privateIPAddressVersion")) {
        props.put("privateIPAddressVersion", "IPv4");
      }
      stored.set("properties", props);
      next.add(stored);
    }
    if (next.isEmpty()) {
      throw new ArmError(400, "NetworkInterfaceMustHaveAtLeastOneIpConfiguration", "Network interface " + nicId
          + " must have at least one IP configuration.");
    }
    return next;
  }

  /** Exactly one primary (a lone configuration is it), the existing primary kept, and the NIC's limit. */
  private void checkPrimary(Nic existing, List<ObjectNode> next, String nicId) {
    if (existing != null) {
      ObjectNode oldPrimary = existing.configs.stream().filter(c -> c.path("properties").path("primary").asBoolean())
          .findFirst().orElse(null);
      if (oldPrimary != null && next.stream().noneMatch(c -> c.get("name").asText()
          .equalsIgnoreCase(oldPrimary.get("name").asText()) && c.path("properties").path("primary").asBoolean())) {
        throw new ArmError(400, "IpConfigDeleteNotSupported", "IP Configuration " + oldPrimary.get("name").asText()
            + " cannot be deleted. Deletion and renaming of primary IP Configuration is not supported");
      }
    }
    if (next.size() == 1) {
      ((ObjectNode) next.get(0).get("properties")).put("primary", true);
    }
    long primaries = next.stream().filter(c -> c.path("properties").path("primary").asBoolean()).count();
    if (primaries == 0) {
      throw new ArmError(400, "NetworkInterfaceMustHaveOneOneIPConfigAsPrimary", "Network Interface " + nicId
          + " specifies multiple IPConfigurations but none of the IPConfigurations is specified as Primary.");
    }
    if (primaries > 1) {
      throw new ArmError(400, ArmServer.TWO_PRIMARIES_CODE, "Network Interface " + nicId + " has more than one primary "
          + "IPConfiguration (the fake's code: Azure's is not documented).");
    }
    int limit = state.settings.nicLimit;
    if (next.size() > limit) {
      throw new ArmError(400, ArmServer.NIC_LIMIT_CODE, "Network interface " + nicId + " has " + next.size()
          + " IP configurations; the limit is " + limit + " (the fake's code: Azure's is not documented).");
    }
  }

  private static ArmError referenceNotFound(String id, String nicId) {
    return new ArmError(400, "InvalidResourceReference", "Resource " + id + " referenced by resource " + nicId
        + " was not found. Please make sure that the referenced resource exists, and that both resources are in"
        + " the same region.");
  }

  /** One configuration's references (subnet, backend pools) and address, as Azure checks and stores them. */
  private void resolveConfig(ObjectNode c, Nic target, boolean create, List<ObjectNode> next, Map<String, String> taken) {
    ObjectNode props = (ObjectNode) c.get("properties");
    String nicId = target.id();
    String cfgId = nicId + "/ipConfigurations/" + c.get("name").asText();
    String subnetId = props.path("subnet").path("id").asText(null);
    Subnet s = subnetId == null ? null : state.subnet(subnetId).orElse(null);
    if (s == null) {
      throw referenceNotFound(subnetId, nicId);
    }
    props.putObject("subnet").put("id", s.id()); // canonical casing
    resolvePools(props, nicId, cfgId);
    boolean v6 = "IPv6".equalsIgnoreCase(props.path("privateIPAddressVersion").asText());
    props.put("privateIPAddressVersion", v6 ? "IPv6" : "IPv4");
    String method = props.path("privateIPAllocationMethod").asText("Dynamic");
    String ip;
    if ("Dynamic".equalsIgnoreCase(method)) {
      ip = dynamicAddress(c, s, v6, target, create, next);
      props.put("privateIPAddress", ip);
      props.put("privateIPAllocationMethod", "Dynamic");
    } else {
      ip = staticAddress(props.path("privateIPAddress").asText(null), v6, s, cfgId, target, create, taken);
      props.put("privateIPAddress", ip);
      props.put("privateIPAllocationMethod", "Static");
    }
    taken.put(ip, cfgId);
  }

  /** A dynamic address stays while its config does (and its subnet holds it); else the next free one. */
  private String dynamicAddress(ObjectNode c, Subnet s, boolean v6, Nic target, boolean create, List<ObjectNode> next) {
    ObjectNode existing = create ? null : target.configs.stream().filter(x -> x.get("name").asText()
        .equalsIgnoreCase(c.get("name").asText())).findFirst().orElse(null);
    String had = existing == null ? null : existing.path("properties").path("privateIPAddress").asText(null);
    if (had != null && s.prefixFor(had).isPresent()) {
      return had;
    }
    return state.nextFree(s, !v6, target, next).orElseThrow(() -> new ArmError(400, "SubnetIsFull", "Subnet " + s.name
        + " with address prefix " + s.prefixes.get(0).text() + " does not have enough capacity for 1 IP addresses."));
  }

  /** The backend pools must exist, and a secondary configuration cannot be in a pool an outbound rule uses. */
  private void resolvePools(ObjectNode props, String nicId, String cfgId) {
    ArrayNode pools = F.arrayNode();
    for (JsonNode p : props.path("loadBalancerBackendAddressPools")) {
      String poolId = p.path("id").asText("");
      Optional<ArmState.PoolRef> lbPool = state.pool(poolId);
      if (lbPool.isEmpty()) {
        throw referenceNotFound(poolId, nicId);
      }
      LoadBalancer lb = lbPool.get().lb();
      String pool = lbPool.get().name();
      if (!props.path("primary").asBoolean() && lb.outbound.contains(pool.toLowerCase(Locale.ROOT))) {
        throw new ArmError(400, "OutboundRuleCannotBeUsedWithBackendAddressPoolThatIsReferencedBySecondaryIpConfigs",
            "OutboundRule " + lb.id() + "/outboundRules/outbound-rule-v4 cannot be used with Backend Address Pool "
            + lb.id() + "/backendAddressPools/" + pool + " that contains Secondary IPConfig " + cfgId);
      }
      pools.addObject().put("id", lb.id() + "/backendAddressPools/" + pool);
    }
    if (props.has("loadBalancerBackendAddressPools")) {
      props.set("loadBalancerBackendAddressPools", pools);
    }
  }

  /** A static address, canonical: of the right version, in the subnet, not reserved, held by nobody else. */
  private String staticAddress(String ip, boolean v6, Subnet s, String cfgId, Nic target, boolean create,
      Map<String, String> taken) {
    if (ip == null || !Cidr.isAddress(ip)) {
      throw new ArmError(400, "InvalidRequestFormat", "Cannot parse the request: privateIPAddress '" + ip + "'.");
    }
    if (ip.contains(":") != v6) {
      throw new ArmError(400, "PrivateIPAddressVersionMismatch", "IP configuration " + cfgId + " has address " + ip
          + " of the wrong version.");
    }
    Optional<Cidr> prefix = s.prefixFor(ip);
    if (prefix.isEmpty()) {
      throw new ArmError(400, "PrivateIPAddressNotInSubnet", "IP configuration " + cfgId + " uses the private IP "
          + "address " + ip + " which is outside of the subnet range " + s.id() + ".");
    }
    if (prefix.get().reserved(ip)) {
      throw new ArmError(400, "PrivateIPAddressInReservedRange", "IP configuration " + cfgId + " uses the private "
          + "IP address " + ip + " which is in a reserved range (includes an address range required by Azure).");
    }
    String canonical = Cidr.toText(Cidr.toNumber(ip), !v6);
    Optional<String> holder = state.holderOf(canonical, target);
    if (holder.isEmpty() && taken.containsKey(canonical)) {
      holder = Optional.of(taken.get(canonical));
    }
    if (holder.isPresent()) {
      throw new ArmError(400, "PrivateIPAddressIsAllocated", "IP configuration " + cfgId + " is using the private IP "
          + "address " + canonical + " which is already allocated to resource " + holder.get() + ".");
    }
    boolean hadIt = !create && target.configs.stream().anyMatch(x -> canonical.equals(
        x.path("properties").path("privateIPAddress").asText()));
    if (!hadIt && state.quarantined(canonical)) {
      throw new ArmError(400, "PrivateIPAddressIsAllocated", "IP configuration " + cfgId + " is using the private IP "
          + "address " + canonical + " which is already allocated to resource (being cleaned up).");
    }
    return canonical;
  }

  /** The PUT is accepted: released addresses are quarantined, the body stored, its operation started. */
  private Answer accept(String key, Nic target, boolean create, JsonNode in, List<ObjectNode> next, Set<String> kept) {
    List<ObjectNode> before = target.configs;
    if (!create) {
      for (ObjectNode c : before) {
        String ip = c.path("properties").path("privateIPAddress").asText();
        if (!kept.contains(ip)) {
          state.quarantine.put(ip, Instant.now());
        }
      }
    }
    target.configs = next;
    settingsFromBody(target, (ObjectNode) in.get("properties"), in);
    target.etag = ArmState.newEtag();
    if (create) {
      state.nics.put(key, target);
    }
    Map<String, String> headers = operations.start(key, target, create, before);
    return new Answer(create ? 201 : 200, json.nic(target), headers);
  }

  /** A PUT replaces the NIC's settings: what its body leaves out is reset (no NSG, no DNS servers, off, no tags). */
  private void settingsFromBody(Nic target, ObjectNode props, JsonNode in) {
    String nsg = props.path("networkSecurityGroup").path("id").asText(null);
    target.nsgId = nsg == null ? null : state.nsgs.get(nsg.toLowerCase(Locale.ROOT));
    List<String> dns = new ArrayList<>();
    props.path("dnsSettings").path("dnsServers").forEach(d -> dns.add(d.asText()));
    target.dnsServers = List.copyOf(dns);
    target.acceleratedNetworking = props.path("enableAcceleratedNetworking").asBoolean(false);
    target.ipForwarding = props.path("enableIPForwarding").asBoolean(false);
    target.tags = in.path("tags").isObject() ? ((ObjectNode) in.get("tags")).deepCopy() : F.objectNode();
  }
}
