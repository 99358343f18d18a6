package org.ipamoperators.egressip.plan;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.ipamoperators.core.address.Ip;

/**
 * The order of one pass's writes and what it gives back to the ledger: one holder at every step.
 *
 * <p>A pass writes in this order, each step only after the one before it was applied:
 * <ol>
 *   <li><b>unpublish</b>: a namespace that no longer holds an address loses the annotation this IPAM wrote;</li>
 *   <li><b>claim</b>, then <b>publish</b>: a namespace's missing addresses are claimed in the ledger, and its
 *       annotation written only once every one of its claims succeeded;</li>
 *   <li><b>cloud</b>: attach, move (make before break), detach;</li>
 *   <li><b>network</b>: the NetNamespaces (or EgressIPs) of served namespaces set, those of namespaces that show
 *       an address they no longer hold cleared ({@link #toClear}); HostSubnets let go before they take;</li>
 *   <li><b>release</b>: an address this IPAM gives up goes back to the ledger only once no place shows it any
 *       more ({@link #release}).</li>
 * </ol>
 * The planner never hands an address to a new holder in the pass that gives it up; a later pass can, once it is
 * released, so a new holder is only ever published after the old one was confirmed clear. A write that failed or
 * was refused leaves its surface showing the address, so the address stays claimed, and the next pass (which
 * computes its writes from what the surfaces show, not from what the previous pass did) writes it again.
 */
public final class EgressWrites {
  private EgressWrites() {}

  /** The places a cluster or a cloud shows an egress address. */
  public enum Surface {
    ANNOTATION("annotation egressips of namespace"),
    NET_NAMESPACE("NetNamespace"),
    HOST_SUBNET("HostSubnet"),
    EGRESS_IP("EgressIP"),
    INTERFACE("network interface of node");

    private final String text;

    Surface(String text) {
      this.text = text;
    }
  }

  /** An address seen on one surface of one object. */
  public record Sighting(Surface surface, String object) {
    public String describe() {
      return surface.text + " " + object;
    }
  }

  /**
   * What a pass gives back now, and what it keeps because a surface still shows it.
   *
   * @param now the addresses to release, in address order
   * @param kept each address kept, with where it is still shown
   */
  public record Release(List<Ip> now, SortedMap<Ip, Sighting> kept) {
    /** One line naming what is kept and where, for a log or an Event; empty when nothing is. */
    public String describeKept() {
      List<String> parts = new ArrayList<>();
      kept.forEach((ip, s) -> parts.add(ip + " (still on " + s.describe() + ")"));
      return parts.isEmpty() ? "" : "kept until cleared: " + String.join(", ", parts);
    }
  }

  /**
   * The addresses of {@code toRelease} that may go back to the ledger: those no surface shows after the pass's
   * writes. The others keep their claim; the next pass clears their surfaces again and releases them then.
   *
   * @param shown where an address is still shown after the writes (empty: nowhere)
   */
  public static Release release(Collection<Ip> toRelease, Function<Ip, Optional<Sighting>> shown) {
    List<Ip> now = new ArrayList<>();
    SortedMap<Ip, Sighting> kept = new TreeMap<>();
    for (Ip ip : new TreeSet<>(toRelease)) {
      Optional<Sighting> s = shown.apply(ip);
      if (s.isPresent()) {
        kept.put(ip, s.get());
      } else {
        now.add(ip);
      }
    }
    return new Release(now, kept);
  }

  /**
   * The namespaces whose network entries (NetNamespace) must be cleared of this IPAM's addresses: every namespace
   * not served by this pass whose entry shows one of them (a served namespace's entry is set to its addresses,
   * which takes off the rest). Computed from what the network shows, so a clear that failed once is found again by
   * every later pass.
   *
   * @param served the namespaces served by this pass, with their addresses
   * @param shownOnNetwork namespace to the addresses of this IPAM its network entry shows
   */
  public static SortedSet<String> toClear(Map<String, List<Ip>> served, Map<String, Set<Ip>> shownOnNetwork) {
    SortedSet<String> out = new TreeSet<>();
    shownOnNetwork.forEach((ns, ips) -> {
      if (!ips.isEmpty() && !served.containsKey(ns)) {
        out.add(ns);
      }
    });
    return out;
  }
}
