package org.ipamoperators.cli.plan;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.placement.Change;
import org.ipamoperators.core.placement.GroupHeadroom;
import org.ipamoperators.core.placement.Unplaceable;
import org.ipamoperators.core.plan.PlanInput;
import org.ipamoperators.core.plan.PlanResult.Allocation;
import org.ipamoperators.core.plan.PlanResult.PoolUsage;
import org.ipamoperators.core.plan.PlanResult.Released;
import org.ipamoperators.core.plan.PlanResult;
import org.ipamoperators.core.plan.PoolDefinition;
import org.ipamoperators.core.pool.Pool;

/** Renders a {@link PlanResult} for people (aligned text) or for scripts (a JSON-ready tree). */
final class PlanReport {
  private PlanReport() {}

  /** Every problem as one line: conflicts, invalid pools, unallocated and unplaceable addresses. */
  static List<Map<String, Object>> problems(PlanResult r) {
    List<Map<String, Object>> out = new ArrayList<>();
    r.invalidPools().forEach(p -> p.problems().forEach(x ->
        out.add(problem("invalid-pool", p.pool(), "pool " + p.pool() + ": " + x.message()))));
    r.conflicts().forEach(c -> out.add(problem("conflict",
        c.pool() == null ? c.conflict().address().toString() : c.pool(), c.conflict().message())));
    r.unallocated().forEach(u -> out.add(problem("unallocated", u.claimant(),
        u.claimant() + " gets no address from " + u.pool() + ": " + u.reason())));
    for (Unplaceable u : r.placement().unplaceable()) {
      out.add(problem("unplaceable", u.owner(), u.message()));
    }
    return out;
  }

  private static Map<String, Object> problem(String kind, String subject, String message) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", kind);
    m.put("subject", subject);
    m.put("message", message);
    return m;
  }

  /**
   * Per pool and family, how many IPv6 anycast addresses (Subnet-Router, RFC 2526) the capacity
   * leaves out, so that a /64's capacity of 2^64-257 explains itself.
   */
  static Map<String, BigInteger> anycastExcluded(PlanInput input) {
    Map<String, BigInteger> out = new LinkedHashMap<>();
    for (PoolDefinition d : input.pools()) {
      if (Pool.validate(d.name(), d.ranges(), d.reserved()).isEmpty()) {
        BigInteger n = Pool.of(d.name(), d.ranges(), d.reserved()).protocolReservedCount(IpFamily.IPV6);
        if (n.signum() > 0) {
          out.put(d.name(), n);
        }
      }
    }
    return out;
  }

  static Map<String, Object> json(PlanResult r) {
    return json(r, Map.of());
  }

  static Map<String, Object> json(PlanResult r, Map<String, BigInteger> anycast) {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("pools", r.usage().stream().map(u -> pool(u, anycast)).toList());
    root.put("allocations", r.allocations().stream().map(PlanReport::allocation).toList());
    Map<String, List<String>> placement = new LinkedHashMap<>();
    r.placement().assignments().forEach((node, ips) -> placement.put(node, ips.stream().map(Ip::toString).toList()));
    root.put("placement", placement);
    root.put("changes", r.placement().changes().stream().map(PlanReport::change).toList());
    root.put("released", r.released().stream().map(PlanReport::release).toList());
    root.put("headroom", r.placement().headroom().stream().map(PlanReport::headroom).toList());
    root.put("problems", problems(r));
    return root;
  }

  private static Map<String, Object> pool(PoolUsage u, Map<String, BigInteger> anycast) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("pool", u.pool());
    m.put("family", u.family().kubernetesName());
    m.put("capacity", u.capacity());
    m.put("allocated", u.allocated());
    m.put("free", u.free());
    if (u.family() == IpFamily.IPV6 && anycast.containsKey(u.pool())) {
      m.put("anycastExcluded", anycast.get(u.pool()));
    }
    return m;
  }

  private static Map<String, Object> allocation(Allocation a) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("claimant", a.claimant());
    m.put("pool", a.pool());
    m.put("address", a.address().toString());
    m.put("kept", a.kept());
    return m;
  }

  private static Map<String, Object> change(Change c) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", c.kind().name());
    m.put("address", c.address().toString());
    m.put("from", c.from());
    m.put("to", c.to());
    m.put("reason", c.reason());
    return m;
  }

  private static Map<String, Object> release(Released x) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("owner", x.owner());
    m.put("pool", x.pool());
    m.put("address", x.address().toString());
    m.put("reason", x.reason());
    return m;
  }

  private static Map<String, Object> headroom(GroupHeadroom h) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("group", h.group());
    m.put("eligibleNodes", h.eligibleNodes());
    m.put("hosted", h.hosted());
    m.put("busiestNode", h.busiestNode());
    m.put("busiestHosted", h.busiestHosted());
    m.put("spareElsewhere", h.spareElsewhere() < 0 ? "unlimited" : h.spareElsewhere());
    m.put("survivesLossOfBusiestNode", h.survivesLossOfBusiestNode());
    return m;
  }

  static String text(PlanResult r) {
    return text(r, Map.of());
  }

  static String text(PlanResult r, Map<String, BigInteger> anycast) {
    StringBuilder b = new StringBuilder();
    b.append("Pools\n");
    r.usage().forEach(u -> b.append(String.format("  %-16s %-5s capacity %-22s allocated %-8s free %s%s%n",
        u.pool(), u.family().kubernetesName(), u.capacity(), u.allocated(), u.free(),
        u.family() == IpFamily.IPV6 && anycast.containsKey(u.pool())
            ? " (" + anycast.get(u.pool()) + " anycast addresses left out: Subnet-Router, RFC 2526)" : "")));
    b.append("\nAllocations\n");
    if (r.allocations().isEmpty()) {
      b.append("  (none)\n");
    }
    r.allocations().forEach(a -> b.append(String.format("  %-24s %-16s %-40s %s%n", a.claimant(), a.pool(),
        a.address(), a.kept() ? "kept" : "new")));
    if (!r.released().isEmpty()) {
      b.append("\nReleased\n");
      r.released().forEach(x -> b.append(String.format("  %-40s %s%n", x.address(), x.reason())));
    }
    b.append("\nPlacement\n");
    r.placement().assignments().forEach((node, ips) -> b.append(String.format("  %-24s %s%n", node,
        ips.isEmpty() ? "-" : String.join(", ", ips.stream().map(Ip::toString).toList()))));
    b.append("\nChanges\n");
    if (r.placement().changes().isEmpty()) {
      b.append("  (none)\n");
    }
    for (Change c : r.placement().changes()) {
      String what = switch (c.kind()) {
        case PLACE -> "place  " + c.address() + " on " + c.to();
        case MOVE -> "move   " + c.address() + " from " + c.from() + " to " + c.to();
        case REMOVE -> "remove " + c.address() + " from " + c.from();
      };
      b.append("  ").append(what).append("  (").append(c.reason()).append(")\n");
    }
    if (!r.placement().headroom().isEmpty()) {
      b.append("\nHeadroom\n");
      for (GroupHeadroom h : r.placement().headroom()) {
        b.append(String.format("  %-16s eligible nodes %d, hosting %d; busiest %s (%d); spare elsewhere %s: %s%n",
            h.group() == null ? "(no group)" : h.group(), h.eligibleNodes(), h.hosted(), h.busiestNode(),
            h.busiestHosted(), h.spareElsewhere() < 0 ? "unlimited" : Long.toString(h.spareElsewhere()),
            h.survivesLossOfBusiestNode() ? "survives losing it" : "CANNOT absorb losing it"));
      }
    }
    List<Map<String, Object>> problems = problems(r);
    b.append("\nProblems\n");
    if (problems.isEmpty()) {
      b.append("  (none)\n");
    }
    problems.forEach(p -> b.append("  ").append(p.get("kind")).append(": ").append(p.get("message")).append('\n'));
    return b.toString();
  }
}
