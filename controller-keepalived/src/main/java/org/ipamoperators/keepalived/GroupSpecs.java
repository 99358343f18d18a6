package org.ipamoperators.keepalived;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Optional;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.ipamoperators.keepalived.config.GroupSettings;

/** Turns a KeepalivedGroup's spec into the renderer's {@link GroupSettings}; bad values are IllegalArgumentExceptions. */
final class GroupSpecs {
  /**
   * The interface written for nodes of a group with {@code interfaceFromIP}: the pod's config-setup and
   * config-reloader replace it with the interface that routes to that address on their node.
   */
  static final String INTERFACE_PLACEHOLDER = "ipam-from-ip";

  private GroupSpecs() {}

  static GroupSettings settings(KeepalivedGroup group, Optional<String> password) {
    KeepalivedGroupSpec spec = group.getSpec();
    if (spec == null) {
      throw new IllegalArgumentException("the group has no spec");
    }
    GroupSettings.Builder b = GroupSettings.builder(group.getMetadata().getNamespace(), group.getMetadata().getName());
    b.interfaceName(spec.interfaceFromIP() != null ? null : spec.interfaceName());
    if (spec.interfaceFromIP() != null) {
      b.interfaceFromIp(parseIp(spec.interfaceFromIP(), "interfaceFromIP"));
    }
    b.unicast(Boolean.TRUE.equals(spec.unicastEnabled()));
    password.ifPresent(b::password);
    if (spec.verbatimConfig() != null) {
      b.verbatimConfig(spec.verbatimConfig());
    }
    if (spec.vrrpVersion() != null) {
      b.vrrpVersion(spec.vrrpVersion());
    }
    if (spec.advertInterval() != null) {
      b.advertInterval(duration(spec.advertInterval(), "advertInterval"));
    } else if (spec.vrrpVersion() != null && spec.vrrpVersion() == 2) {
      b.advertInterval(Duration.ofSeconds(1)); // VRRPv2 has whole-second adverts only
    }
    if (spec.priority() != null) {
      b.priority(spec.priority());
    }
    if (spec.ownerPriority() != null) {
      b.ownerPriority(spec.ownerPriority());
    }
    if (spec.preempt() != null) {
      b.preempt(spec.preempt());
    }
    if (spec.preemptDelay() != null) {
      b.preemptDelay(duration(spec.preemptDelay(), "preemptDelay"));
    }
    if (spec.sharedInstances() != null) {
      b.sharedInstances(spec.sharedInstances());
    }
    if (spec.maxAdvertisedVips() != null) {
      b.maxAdvertisedVips(spec.maxAdvertisedVips());
    }
    for (Integer id : spec.blacklistOrEmpty()) {
      if (id == null || id < 1 || id > 255) {
        throw new IllegalArgumentException("blacklistRouterIDs must be in 1..255: " + id);
      }
    }
    return b.build();
  }

  /** {@code 100ms}, {@code 0.1s}, {@code 2s}. */
  static Duration duration(String text, String field) {
    String t = text.trim();
    try {
      BigDecimal millis;
      if (t.endsWith("ms")) {
        millis = new BigDecimal(t.substring(0, t.length() - 2));
      } else if (t.endsWith("s")) {
        millis = new BigDecimal(t.substring(0, t.length() - 1)).movePointRight(3);
      } else {
        throw new NumberFormatException();
      }
      return Duration.ofNanos(millis.movePointRight(6).longValueExact());
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(field + " is not a duration like 100ms or 1s: '" + text + "'");
    }
  }

  private static Ip parseIp(String text, String field) {
    Ip ip;
    try {
      ip = Ip.parse(text.trim());
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(field + " is not an IP address: '" + text + "'");
    }
    if (!ip.isIPv4() && ip.hi() == 0 && (ip.lo() >>> 32) == 0xffffL) {
      // No node has a route to ::ffff:a.b.c.d: the reloader would never find an interface.
      throw new IllegalArgumentException(field + " '" + text + "' is an IPv4-mapped IPv6 address; write the IPv4"
          + " address " + Ip.v4(ip.lo() & 0xffffffffL));
    }
    return ip;
  }
}
