package org.ipamoperators.keepalived.config;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;

/**
 * One holder at every step for VIPs that move between groups: a group renders a VIP only once no other group's
 * configuration renders it. A Service moved from group A to group B is announced by B only after A's ConfigMap
 * no longer carries it, so two groups never announce one address with VRRP at the same time, even while A's
 * write is refused. When two configurations already carry one VIP (an older version, or two Services asking for
 * the same address in two groups), the group whose ConfigMap is older keeps it and the younger lets go, so the
 * two converge instead of both letting go.
 */
public final class VipHandover {
  private VipHandover() {}

  /** Another group's configuration: its key ({@code namespace/name}) and when its ConfigMap was created. */
  public record Holder(String group, Instant since) {
    private static final Comparator<Holder> AGE = Comparator.comparing(Holder::since).thenComparing(Holder::group);

    boolean olderThan(Holder other) {
      return AGE.compare(this, other) < 0;
    }
  }

  /** A VIP of a Service this group waits to render, and the group whose configuration still renders it. */
  public record Deferred(ServiceRef service, Ip vip, String heldBy) {}

  /** The Services' VIPs this group may render now (Services left with none are left out), and what waits. */
  public record Decision(List<ServiceVips> vips, List<Deferred> deferred) {}

  /**
   * @param wanted the VIPs the Services attached to this group ask for
   * @param elsewhere every VIP another group's configuration renders, with that group
   * @param here this group, with its ConfigMap's creation time (now when it has none yet)
   * @param renderedHere the VIPs this group's own configuration renders now
   */
  public static Decision decide(List<ServiceVips> wanted, Map<Ip, Holder> elsewhere, Holder here,
      Set<Ip> renderedHere) {
    List<ServiceVips> now = new ArrayList<>();
    List<Deferred> deferred = new ArrayList<>();
    for (ServiceVips s : wanted) {
      SortedSet<Ip> keep = new TreeSet<>();
      for (Ip vip : s.vips()) {
        Holder other = elsewhere.get(vip);
        if (other == null || renderedHere.contains(vip) && here.olderThan(other)) {
          keep.add(vip);
        } else {
          deferred.add(new Deferred(s.service(), vip, other.group()));
        }
      }
      if (keep.size() == s.vips().size()) {
        now.add(s);
      } else if (!keep.isEmpty()) {
        now.add(new ServiceVips(s.service(), keep, s.spread(), s.verbatim(), s.healthCheckPort()));
      }
    }
    return new Decision(List.copyOf(now), List.copyOf(deferred));
  }

  /**
   * The VIPs a group's rendered configuration carries ({@code virtual_ipaddress} and
   * {@code virtual_ipaddress_excluded} blocks of every node's keepalived.conf, as {@link KeepalivedConfigRenderer}
   * writes them). Lines that are not addresses are skipped.
   */
  public static Set<Ip> rendered(Map<String, String> configByNode) {
    Set<Ip> out = new TreeSet<>();
    if (configByNode == null) {
      return out;
    }
    for (String conf : configByNode.values()) {
      boolean inside = false;
      for (String raw : conf.split("\n")) {
        String line = raw.trim();
        if (line.startsWith("virtual_ipaddress")) {
          inside = line.endsWith("{");
        } else if (inside && line.startsWith("}")) {
          inside = false;
        } else if (inside && !line.isEmpty()) {
          String token = line.split("\\s+")[0];
          int slash = token.indexOf('/');
          try {
            out.add(Ip.parse(slash < 0 ? token : token.substring(0, slash)));
          } catch (IllegalArgumentException e) {
            // not an address: nothing this group announces
          }
        }
      }
    }
    return out;
  }
}
