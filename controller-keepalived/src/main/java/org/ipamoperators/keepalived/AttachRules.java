package org.ipamoperators.keepalived;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;

/**
 * Who may attach a Service to a KeepalivedGroup, and which addresses the group announces for them (pure). A group's
 * own {@code serviceNamespaces} and {@code vipCIDRs} win; a group without them (every keepalived-operator object)
 * gets the operator's defaults ({@code --keepalived-service-namespaces}, {@code --keepalived-vip-cidrs}), which
 * allow everything unless the cluster admin narrows them.
 *
 * @param namespaces namespaces whose Services may attach; empty: every namespace. {@value #GROUP_NAMESPACE} stands
 *     for the namespace of the group itself (useful as an operator-wide default)
 * @param cidrs the ranges the group's VIPs must lie in (IPv4 and IPv6); empty: any address
 */
public record AttachRules(Set<String> namespaces, List<IpRange> cidrs) {
  /** In a list of namespaces: the group's own namespace. Never a namespace name (those have no '@'). */
  public static final String GROUP_NAMESPACE = "@group";
  /** Every namespace, every address: keepalived-operator's behaviour. */
  public static final AttachRules ANY = new AttachRules(Set.of(), List.of());
  private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  public AttachRules {
    namespaces = namespaces == null ? Set.of() : Set.copyOf(namespaces);
    cidrs = cidrs == null ? List.of() : List.copyOf(cidrs);
  }

  /**
   * Reads namespaces and ranges (CIDRs, single addresses or {@code first-last}) as a user wrote them.
   *
   * @throws IllegalArgumentException naming the first entry that is neither a namespace nor {@value
   *     #GROUP_NAMESPACE}, or no address range
   */
  public static AttachRules parse(Collection<String> namespaces, Collection<String> cidrs) {
    return new AttachRules(parseNamespaces(namespaces), parseCidrs(cidrs));
  }

  private static Set<String> parseNamespaces(Collection<String> namespaces) {
    Set<String> ns = new TreeSet<>();
    for (String n : namespaces == null ? List.<String>of() : namespaces) {
      String t = n == null ? "" : n.trim();
      if (!t.equals(GROUP_NAMESPACE) && !NAMESPACE.matcher(t).matches()) {
        throw new IllegalArgumentException("'" + n + "' is not a namespace name (or " + GROUP_NAMESPACE + ")");
      }
      ns.add(t);
    }
    return ns;
  }

  private static List<IpRange> parseCidrs(Collection<String> cidrs) {
    List<IpRange> ranges = new ArrayList<>();
    for (String c : cidrs == null ? List.<String>of() : cidrs) {
      ranges.add(IpRange.parse(c)); // its message names the value and what was expected
    }
    return ranges;
  }

  /**
   * The rules of one group: each of its own fields when set, else this default; {@value #GROUP_NAMESPACE} becomes
   * the group's namespace. An empty list (the API server refuses one) counts as unset.
   *
   * @throws IllegalArgumentException for a field of the group that does not parse (the group is InvalidSpec)
   */
  AttachRules forGroup(String groupNamespace, KeepalivedGroupSpec spec) {
    Set<String> ns = namespaces;
    List<IpRange> ranges = cidrs;
    if (spec != null && spec.serviceNamespaces() != null && !spec.serviceNamespaces().isEmpty()) {
      try {
        ns = parseNamespaces(spec.serviceNamespaces());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("serviceNamespaces: " + e.getMessage(), e);
      }
    }
    if (spec != null && spec.vipCIDRs() != null && !spec.vipCIDRs().isEmpty()) {
      try {
        ranges = parseCidrs(spec.vipCIDRs());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("vipCIDRs: " + e.getMessage(), e);
      }
    }
    return new AttachRules(ns.stream().map(n -> n.equals(GROUP_NAMESPACE) ? groupNamespace : n)
        .collect(Collectors.toSet()), ranges);
  }

  boolean namespaceAllowed(String namespace) {
    return namespaces.isEmpty() || namespaces.contains(namespace);
  }

  /** Whether the group may announce {@code ip}: it lies in one of the ranges (of its family), or any is allowed. */
  boolean announces(Ip ip) {
    return cidrs.isEmpty() || cidrs.stream().anyMatch(r -> r.contains(ip));
  }

  String namespacesText() {
    return namespaces.isEmpty() ? "every namespace" : new TreeSet<>(namespaces).toString();
  }

  String cidrsText() {
    return cidrs.isEmpty() ? "any address" : cidrs.stream().map(IpRange::toString).collect(Collectors.joining(", ",
        "[", "]"));
  }
}
