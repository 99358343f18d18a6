package org.ipamoperators.testsupport.arm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The server's in-memory resources, keyed by lower-case id, and the questions every check asks of
 * them (which subnet or pool an id names, who holds an address, the next free one). Requests are
 * served on several threads: this object is the one monitor that guards it, its settings, and the
 * tokens, faults and operations the classes beside it keep.
 */
final class ArmState {
  final String subscription;
  final String location;
  final ArmSettings settings = new ArmSettings();
  final Map<String, Vnet> vnets = new LinkedHashMap<>();
  final Map<String, Nic> nics = new LinkedHashMap<>();
  final Map<String, Vm> vms = new LinkedHashMap<>();
  final Map<String, ScaleSetInstance> scaleSetVms = new LinkedHashMap<>();
  final Map<String, LoadBalancer> lbs = new LinkedHashMap<>();
  final Map<String, String> nsgs = new LinkedHashMap<>(); // lower-case id -> id
  final Map<String, AsyncOperation> operations = new HashMap<>();
  final List<SeededHolder> otherHolders = new ArrayList<>();
  final Map<String, Instant> quarantine = new HashMap<>(); // ip -> released at

  /** Something other than a NIC or an LB frontend holding an address (a private endpoint, say). */
  record SeededHolder(String id, String subnetId, String ip) {}

  /** An address held in a subnet and the id of what holds it. */
  record Holding(String id, String ip) {}

  /** A backend pool an id names: its load balancer and its name as seeded. */
  record PoolRef(LoadBalancer lb, String name) {}

  ArmState(String subscription, String location) {
    this.subscription = subscription;
    this.location = location;
  }

  String resourceKey(String rg, String type, String name) {
    return ("/subscriptions/" + subscription + "/resourceGroups/" + rg + "/providers/" + type + "/" + name)
        .toLowerCase(Locale.ROOT);
  }

  Nic nic(String id) {
    return nics.get(id.toLowerCase(Locale.ROOT));
  }

  Optional<Subnet> subnet(String id) {
    String low = id.toLowerCase(Locale.ROOT);
    int at = low.indexOf("/subnets/");
    if (at < 0) {
      return Optional.empty();
    }
    Vnet v = vnets.get(low.substring(0, at));
    return v == null ? Optional.empty() : Optional.ofNullable(v.subnets.get(low.substring(at + "/subnets/".length())));
  }

  Optional<PoolRef> pool(String id) {
    String low = id.toLowerCase(Locale.ROOT);
    int at = low.indexOf("/backendaddresspools/");
    if (at < 0) {
      return Optional.empty();
    }
    LoadBalancer lb = lbs.get(low.substring(0, at));
    if (lb == null) {
      return Optional.empty();
    }
    String name = lb.pools.get(low.substring(at + "/backendaddresspools/".length()));
    return name == null ? Optional.empty() : Optional.of(new PoolRef(lb, name));
  }

  /** Who holds {@code ip}, other than NIC {@code except}. */
  Optional<String> holderOf(String ip, Nic except) {
    for (Nic nic : nics.values()) {
      if (nic == except) {
        continue;
      }
      for (ObjectNode c : nic.configs) {
        String held = c.path("properties").path("privateIPAddress").asText("");
        if (!held.isEmpty() && sameAddress(held, ip)) {
          return Optional.of(nic.id() + "/ipConfigurations/" + c.get("name").asText());
        }
      }
    }
    for (LoadBalancer lb : lbs.values()) {
      for (LoadBalancer.Frontend fe : lb.frontends) {
        if (sameAddress(fe.ip(), ip)) {
          return Optional.of(lb.id() + "/frontendIPConfigurations/" + fe.name());
        }
      }
    }
    for (SeededHolder h : otherHolders) {
      if (sameAddress(h.ip(), ip)) {
        return Optional.of(h.id());
      }
    }
    return Optional.empty();
  }

  /** Everything holding an address in the subnet. */
  List<Holding> holdersIn(Subnet s) {
    List<Holding> out = new ArrayList<>();
    for (Nic nic : nics.values()) {
      for (ObjectNode c : nic.configs) {
        if (c.path("properties").path("subnet").path("id").asText().equalsIgnoreCase(s.id())) {
          out.add(new Holding(nic.id() + "/ipConfigurations/" + c.get("name").asText(),
              c.path("properties").path("privateIPAddress").asText()));
        }
      }
    }
    for (LoadBalancer lb : lbs.values()) {
      for (LoadBalancer.Frontend fe : lb.frontends) {
        if (fe.subnetId().equalsIgnoreCase(s.id())) {
          out.add(new Holding(lb.id() + "/frontendIPConfigurations/" + fe.name(), fe.ip()));
        }
      }
    }
    for (SeededHolder h : otherHolders) {
      if (h.subnetId().equalsIgnoreCase(s.id())) {
        out.add(new Holding(h.id(), h.ip()));
      }
    }
    return out;
  }

  /** The ids of the NIC ipConfigurations in a backend pool (what the LB's GET shows). */
  List<String> backendIpConfigurations(LoadBalancer lb, String pool) {
    String poolId = (lb.id() + "/backendAddressPools/" + pool).toLowerCase(Locale.ROOT);
    List<String> out = new ArrayList<>();
    for (Nic nic : nics.values()) {
      for (ObjectNode c : nic.configs) {
        for (JsonNode p : c.path("properties").path("loadBalancerBackendAddressPools")) {
          if (p.path("id").asText().equalsIgnoreCase(poolId)) {
            out.add(nic.id() + "/ipConfigurations/" + c.get("name").asText());
          }
        }
      }
    }
    return out;
  }

  static boolean sameAddress(String a, String b) {
    return a.contains(":") == b.contains(":") && Cidr.toNumber(a).equals(Cidr.toNumber(b));
  }

  boolean quarantined(String ip) {
    Instant at = quarantine.get(ip);
    return at != null && Instant.now().isBefore(at.plus(settings.quarantineTime));
  }

  /** The lowest address from .4 of the subnet's prefixes of that version held by nobody, not even in {@code body}. */
  Optional<String> nextFree(Subnet s, boolean v4, Nic nic, List<ObjectNode> body) {
    for (Cidr c : s.prefixes) {
      if (c.v4() != v4) {
        continue;
      }
      BigInteger n = c.base().add(BigInteger.valueOf(4));
      BigInteger end = c.last();
      int tries = 0;
      while (n.compareTo(end) < 0 && tries++ < 1_000_000) {
        String cand = Cidr.toText(n, v4);
        boolean inBody = body.stream().anyMatch(x -> cand.equals(x.path("properties").path("privateIPAddress").asText()));
        boolean onNic = nic.configs.stream().anyMatch(x -> cand.equals(x.path("properties").path("privateIPAddress")
            .asText()));
        if (!inBody && !onNic && holderOf(cand, nic).isEmpty() && !quarantined(cand)) {
          return Optional.of(cand);
        }
        n = n.add(BigInteger.ONE);
      }
    }
    return Optional.empty();
  }

  static String newEtag() {
    return "W/\"" + UUID.randomUUID() + "\"";
  }
}
