package org.ipamoperators.core.audit;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;

/**
 * Where OVN-Kubernetes placed the addresses of one EgressIP ({@code k8s.ovn.org/v1}): its
 * {@code status.items[]}, each {@code {node, egressIP}}, written by ovnkube as it assigns and fails over.
 * Read as JSON-shaped values (maps, lists, strings) so that the caller needs no model of the kind.
 * An item is a placement only when it names a node and an address that the EgressIP's
 * {@code spec.egressIPs} still requests: a status item for an address no longer requested is stale (ovnkube
 * has not caught up yet), and taking it would expect the address on a node it is leaving. Anything
 * malformed is skipped, never thrown: the status belongs to OVN, and the audit only reads it.
 */
public final class OvnPlacements {
  private OvnPlacements() {}

  /**
   * The placements one EgressIP's status shows.
   *
   * @param name the EgressIP's name, for the placements' {@code where}
   * @param spec its {@code spec} as parsed JSON (a map), or null
   * @param status its {@code status} as parsed JSON (a map), or null before OVN placed anything
   * @return the placements, one per distinct address and node, in status order
   */
  public static List<Placement> of(String name, Object spec, Object status) {
    Set<String> requested = requested(spec);
    if (!(status instanceof Map<?, ?> s) || !(s.get("items") instanceof List<?> items)) {
      return List.of();
    }
    List<Placement> out = new ArrayList<>();
    String where = "EgressIP " + name + " status.items";
    for (Object item : items) {
      if (!(item instanceof Map<?, ?> i) || !(i.get("node") instanceof String node) || node.isBlank()) {
        continue;
      }
      String ip = canonical(i.get("egressIP"));
      if (ip == null || !requested.contains(ip)) {
        continue;
      }
      Placement p = new Placement(Resource.ip(ip), node.trim(), where);
      if (!out.contains(p)) {
        out.add(p);
      }
    }
    return List.copyOf(out);
  }

  private static Set<String> requested(Object spec) {
    Set<String> out = new TreeSet<>();
    if (spec instanceof Map<?, ?> s && s.get("egressIPs") instanceof List<?> ips) {
      for (Object raw : ips) {
        String ip = canonical(raw);
        if (ip != null) {
          out.add(ip);
        }
      }
    }
    return out;
  }

  private static String canonical(Object raw) {
    if (!(raw instanceof String text) || text.isBlank()) {
      return null;
    }
    try {
      return Ip.parse(text.trim()).toString();
    } catch (RuntimeException e) {
      return null; // not an address: nothing is placed
    }
  }
}
