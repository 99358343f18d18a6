package org.ipamoperators.keepalived.config;

import java.util.Collections;
import java.util.Comparator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;

/**
 * One {@code vrrp_instance}: the VIPs of one address family that move together, under one router id.
 *
 * <p>{@code key} is what the router id is allocated for ({@code status.routerIDs} key): {@code ns/name} for a
 * service, {@code ns/name/ip} for one VIP of a spread service, {@code shared:N} for a shared instance. A key with
 * VIPs of both families yields two instances with the same router id, which keepalived accepts: IPv4 and IPv6 VRRP
 * routers never meet (RFC 5798: the virtual routers of each family "are a domain unto themselves and do not
 * overlap"; other multicast group, other virtual MAC), while one instance cannot hold both families.
 *
 * @param key the router id key
 * @param family address family of all the VIPs
 * @param routerId VRRP virtual router id, 1..255
 * @param vips the VIPs, at least one
 * @param owner the preferred node (spread VIPs, shared instances): it gets {@code ownerPriority}, the others
 *     {@code priority}. Empty: every node has {@code priority} and the VIPs stay where they are
 * @param verbatim the service's verbatim lines (already checked)
 * @param healthChecks health checks tracked by this instance
 * @param services the services whose VIPs this instance carries
 */
public record VrrpInstance(
    String key,
    IpFamily family,
    int routerId,
    SortedSet<Ip> vips,
    Optional<String> owner,
    SortedMap<String, String> verbatim,
    SortedSet<HealthCheck> healthChecks,
    SortedSet<ServiceRef> services) {

  /** Rendering order: by key, IPv4 before IPv6. */
  public static final Comparator<VrrpInstance> ORDER =
      Comparator.comparing(VrrpInstance::key).thenComparing(VrrpInstance::family);

  public VrrpInstance {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(family, "family");
    Objects.requireNonNull(owner, "owner");
    if (key.isEmpty() || key.chars().anyMatch(c -> c <= ' ' || c == '{' || c == '}' || c == '"' || c == '#'
        || c == '!' || c == 0x7f)) {
      throw new IllegalArgumentException("Not a usable instance key: '" + key + "'");
    }
    if (routerId < 1 || routerId > 255) {
      throw new IllegalArgumentException("VRRP router id must be in 1..255: " + routerId + " (" + key + ")");
    }
    if (vips.isEmpty()) {
      throw new IllegalArgumentException("Instance " + key + " has no VIP");
    }
    for (Ip vip : vips) {
      if (vip.family() != family) {
        throw new IllegalArgumentException("Instance " + key + " (" + family + ") cannot carry " + vip);
      }
    }
    Verbatim.Checked checked = Verbatim.checkService(verbatim);
    if (!checked.rejected().isEmpty()) {
      throw new IllegalArgumentException("Instance " + key + ": verbatim refused: " + checked.rejected());
    }
    vips = Collections.unmodifiableSortedSet(new TreeSet<>(vips));
    verbatim = checked.accepted();
    healthChecks = Collections.unmodifiableSortedSet(new TreeSet<>(healthChecks));
    services = Collections.unmodifiableSortedSet(new TreeSet<>(services));
  }

  /** An instance with one VIP, no preferred node, no extras; for tests and simple uses. */
  public static VrrpInstance of(String key, int routerId, Ip... vips) {
    SortedSet<Ip> set = new TreeSet<>(Set.of(vips));
    return new VrrpInstance(key, set.first().family(), routerId, set, Optional.empty(), new TreeMap<>(),
        new TreeSet<>(), new TreeSet<>());
  }

  /** The {@code vrrp_instance} name: the key, with {@code /ipv6} appended for the IPv6 instance. */
  public String name() {
    return family == IpFamily.IPV4 ? key : key + "/ipv6";
  }

  public VrrpInstance withOwner(String node) {
    return new VrrpInstance(key, family, routerId, vips, Optional.ofNullable(node), verbatim, healthChecks, services);
  }

  public VrrpInstance withVerbatim(Map<String, String> lines) {
    return new VrrpInstance(key, family, routerId, vips, owner, new TreeMap<>(lines), healthChecks, services);
  }

  public VrrpInstance withHealthChecks(Set<HealthCheck> checks) {
    return new VrrpInstance(key, family, routerId, vips, owner, verbatim, new TreeSet<>(checks), services);
  }

  public VrrpInstance withServices(Set<ServiceRef> refs) {
    return new VrrpInstance(key, family, routerId, vips, owner, verbatim, healthChecks, new TreeSet<>(refs));
  }
}
