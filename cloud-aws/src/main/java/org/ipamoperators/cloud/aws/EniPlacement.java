package org.ipamoperators.cloud.aws;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;

/**
 * How each address wanted on a target ENI is placed, decided from who holds it now, without I/O:
 * nobody (a plain assign), the target itself (taken over as it is), another ENI whose ownership
 * tags list it (a move), anyone else (refused: never taken from another tool). IPv6 has no
 * reassignment, so an IPv6 move is an unassign from its holder and an assign.
 *
 * @param assign IPv4 addresses nobody holds
 * @param reassign IPv4 addresses moved from another ENI of this operator's
 * @param assignV6 IPv6 addresses to assign, moved ones included
 * @param v6From the IPv6 addresses to unassign first, by the ENI that holds them
 * @param movedFrom every moved address, by the ENI it leaves
 * @param adopt addresses already on the target
 * @param refused addresses another tool's ENI holds, with that ENI's id
 */
record EniPlacement(List<Ip> assign, List<Ip> reassign, List<Ip> assignV6, Map<String, List<Ip>> v6From,
    Map<String, List<Ip>> movedFrom, List<Ip> adopt, Map<Ip, String> refused) {

  /** The ENI that holds an address now, and the addresses its ownership tags list. */
  record Holder(String eniId, Set<Ip> owned) {}

  /** The placement of {@code wanted} on {@code targetEniId}, given the holders by address (none when absent). */
  static EniPlacement of(String targetEniId, Iterable<Ip> wanted, Map<Ip, Holder> holders) {
    EniPlacement p = new EniPlacement(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new LinkedHashMap<>(),
        new LinkedHashMap<>(), new ArrayList<>(), new LinkedHashMap<>());
    for (Ip ip : wanted) {
      Holder holder = holders.get(ip);
      if (holder == null) {
        (ip.isIPv4() ? p.assign : p.assignV6).add(ip);
      } else if (holder.eniId().equals(targetEniId)) {
        p.adopt.add(ip); // on the right ENI already (an earlier attempt, or the old operator's): take it over
      } else if (holder.owned().contains(ip)) {
        if (ip.isIPv4()) {
          p.reassign.add(ip);
        } else {
          p.assignV6.add(ip);
          p.v6From.computeIfAbsent(holder.eniId(), k -> new ArrayList<>()).add(ip);
        }
        p.movedFrom.computeIfAbsent(holder.eniId(), k -> new ArrayList<>()).add(ip);
      } else {
        p.refused.put(ip, holder.eniId());
      }
    }
    return p;
  }

  /** Every address the target's ownership tags list before any assign: all but the refused. */
  List<Ip> toTag() {
    List<Ip> out = new ArrayList<>(assign);
    out.addAll(reassign);
    out.addAll(assignV6);
    out.addAll(adopt);
    return out;
  }
}
