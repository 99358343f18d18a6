package org.ipamoperators.cli.plan;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.failover.NodeVerdict;
import org.ipamoperators.core.placement.Unplaceable;
import org.ipamoperators.egressip.EgressFacts;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.plan.EgressDecision;
import org.ipamoperators.egressip.plan.EgressPlan;
import org.ipamoperators.egressip.plan.EgressPolicy;
import org.ipamoperators.egressip.plan.NodeInfo;

/**
 * {@code ipam plan} over cluster objects for controller-egressip: each EgressIPAM decided by the
 * controller's own policy ({@link EgressPolicy#decide}) from the objects read as the controller
 * reads them ({@link EgressFacts}), rendered for people or scripts. No failure history is known,
 * so a node not ready counts from its Ready condition's last transition, as after a restart.
 */
final class EgressObjectsPlan {
  private EgressObjectsPlan() {}

  /** One EgressIPAM's decision. */
  record Decided(String ipam, EgressDecision decision, Map<String, Set<Ip>> current) {
    /** Whether the namespace's egressips annotation shows the address today. */
    boolean kept(String namespace, Ip ip) {
      return current.getOrDefault(namespace, Set.of()).contains(ip);
    }

    boolean clean() {
      EgressPlan p = decision.plan();
      return p.specValid() && p.problems().isEmpty() && p.placement().unplaceable().isEmpty();
    }
  }

  static List<Decided> decide(ClusterObjects objects, Instant now) {
    List<Decided> out = new ArrayList<>();
    List<EgressIPAM> ipams = new ArrayList<>(objects.egressIpams());
    ipams.sort(java.util.Comparator.comparing(i -> i.getMetadata().getName()));
    for (EgressIPAM ipam : ipams) {
      var inputs = EgressFacts.inputs(ipam, objects.namespaces(), objects.nodes(), objects.claims(), objects.blocks(),
          objects.hostSubnets());
      Map<String, Set<Ip>> current = new HashMap<>();
      for (var ns : inputs.namespaces()) {
        current.put(ns.name(), annotated(ns.egressIps()));
      }
      out.add(new Decided(ipam.getMetadata().getName(), EgressPolicy.decide(inputs, Map.of(), now), current));
    }
    return out;
  }

  private static Set<Ip> annotated(String value) {
    Set<Ip> out = new java.util.HashSet<>();
    if (value != null) {
      for (String part : value.split(",")) {
        try {
          out.add(Ip.parse(part.trim()));
        } catch (RuntimeException e) {
          // an invalid annotation: the plan reports it
        }
      }
    }
    return out;
  }

  private static String capacity(int c) {
    return c == Integer.MAX_VALUE ? "unlimited" : Integer.toString(c);
  }

  private static Map<Ip, String> hostOf(EgressPlan plan) {
    Map<Ip, String> out = new HashMap<>();
    for (Map.Entry<String, SortedSet<Ip>> e : plan.placement().assignments().entrySet()) {
      e.getValue().forEach(ip -> out.put(ip, e.getKey()));
    }
    return out;
  }

  static Map<String, Object> json(List<Decided> decided, Map<String, Integer> ignored) {
    List<Object> ipams = new ArrayList<>();
    for (Decided d : decided) {
      EgressPlan plan = d.decision().plan();
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", d.ipam());
      m.put("specValid", plan.specValid());
      m.put("specProblems", plan.specProblems().stream().map(p -> p.message()).toList());
      Map<Ip, String> host = hostOf(plan);
      List<Object> namespaces = new ArrayList<>();
      plan.served().forEach((ns, ips) -> {
        Set<Ip> toClaim = Set.copyOf(plan.toClaim().getOrDefault(ns, List.of()));
        List<Object> addresses = new ArrayList<>();
        for (Ip ip : ips) {
          Map<String, Object> a = new LinkedHashMap<>();
          a.put("address", ip.toString());
          a.put("node", host.get(ip));
          a.put("new", !d.kept(ns, ip));
          a.put("toClaim", toClaim.contains(ip));
          addresses.add(a);
        }
        Map<String, Object> n = new LinkedHashMap<>();
        n.put("name", ns);
        n.put("annotation", String.join(",", ips.stream().map(Ip::toString).toList()));
        n.put("addresses", addresses);
        namespaces.add(n);
      });
      m.put("namespaces", namespaces);
      m.put("release", plan.toRelease().stream().map(Ip::toString).toList());
      List<Object> problems = new ArrayList<>();
      plan.problems().forEach(p -> problems.add(fields("subject", p.namespace(), "reason", p.reason().name(),
          "message", p.message())));
      for (Unplaceable u : plan.placement().unplaceable()) {
        problems.add(fields("subject", u.owner(), "reason", "Unplaceable", "message", u.message()));
      }
      m.put("problems", problems);
      List<Object> nodes = new ArrayList<>();
      for (NodeInfo n : d.decision().nodes()) {
        Map<String, Object> x = new LinkedHashMap<>();
        x.put("name", n.name());
        x.put("topologyValue", n.topologyValue());
        x.put("eligible", n.eligible());
        x.put("condition", verdict(d.decision(), n.name()));
        x.put("capacity", n.capacity() == Integer.MAX_VALUE ? null : n.capacity());
        x.put("hosts", plan.placement().assignments().getOrDefault(n.name(), new java.util.TreeSet<>()).stream()
            .map(Ip::toString).toList());
        nodes.add(x);
      }
      m.put("nodes", nodes);
      m.put("cidrs", plan.usage().stream().map(u -> fields("cidr", u.cidr(), "capacity", u.capacity(),
          "allocated", u.allocated(), "free", u.free())).toList());
      ipams.add(m);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("egressIPAMs", ipams);
    out.put("ignoredKinds", ignored);
    return out;
  }

  /** Keys and values in the order given: the JSON's field order is part of its format. */
  private static Map<String, Object> fields(Object... keysAndValues) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      out.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return out;
  }

  private static String verdict(EgressDecision d, String node) {
    NodeVerdict v = d.verdicts().get(node);
    return v == null ? "HEALTHY" : v.condition().name();
  }

  static String text(List<Decided> decided, Map<String, Integer> ignored) {
    StringBuilder sb = new StringBuilder();
    if (decided.isEmpty()) {
      sb.append("No EgressIPAM among the objects: nothing for controller-egressip to plan.\n");
    }
    for (Decided d : decided) {
      EgressPlan plan = d.decision().plan();
      sb.append("EgressIPAM ").append(d.ipam()).append(" (as controller-egressip decides it, bare metal)\n");
      if (!plan.specValid()) {
        plan.specProblems().forEach(p -> sb.append("  invalid spec: ").append(p.message()).append('\n'));
        continue;
      }
      Map<Ip, String> host = hostOf(plan);
      int width = plan.served().keySet().stream().mapToInt(String::length).max().orElse(0);
      sb.append("  namespaces served: ").append(plan.served().size()).append('\n');
      plan.served().forEach((ns, ips) -> {
        sb.append("    ").append(ns).append(" ".repeat(width - ns.length() + 2));
        List<String> parts = new ArrayList<>();
        for (Ip ip : ips) {
          String node = host.get(ip);
          parts.add(ip + (d.kept(ns, ip) ? "" : " (new)") + " on " + (node == null ? "no node" : node));
        }
        sb.append(String.join(", ", parts)).append('\n');
      });
      int claims = plan.toClaim().values().stream().mapToInt(List::size).sum();
      if (claims > 0) {
        sb.append("  ledger claims to make: ").append(claims).append('\n');
      }
      if (!plan.toRelease().isEmpty()) {
        sb.append("  released: ").append(plan.toRelease().stream().map(Ip::toString).toList()).append('\n');
      }
      sb.append("  nodes:\n");
      for (NodeInfo n : d.decision().nodes()) {
        if (!n.selected()) {
          continue;
        }
        int hosted = plan.placement().assignments().getOrDefault(n.name(), new java.util.TreeSet<>()).size();
        sb.append("    ").append(n.name()).append(" (").append(n.topologyValue()).append("): ")
            .append(verdict(d.decision(), n.name()).toLowerCase(java.util.Locale.ROOT))
            .append(n.eligible() ? "" : ", takes no new addresses").append(", hosts ").append(hosted)
            .append(" of ").append(capacity(n.capacity())).append('\n');
      }
      plan.usage().forEach(u -> sb.append("  CIDR ").append(u.cidr()).append(": ").append(u.allocated())
          .append(" allocated, ").append(u.free()).append(" free of ").append(u.capacity()).append('\n'));
      if (plan.problems().isEmpty() && plan.placement().unplaceable().isEmpty()) {
        sb.append("  problems: none\n");
      } else {
        sb.append("  problems:\n");
        plan.problems().forEach(p -> sb.append("    ").append(p.namespace()).append(": ").append(p.message())
            .append(" (").append(p.reason()).append(")\n"));
        plan.placement().unplaceable().forEach(u -> sb.append("    ").append(u.message()).append('\n'));
      }
    }
    return sb.append(ignoredLine(ignored)).toString();
  }

  /** The kinds in the file that no plan reads, with their counts (empty when there are none). */
  static String ignoredLine(Map<String, Integer> ignored) {
    if (ignored.isEmpty()) {
      return "";
    }
    List<String> parts = new ArrayList<>();
    ignored.forEach((k, n) -> parts.add(n + " " + k));
    return "Not used for planning: " + String.join(", ", parts) + "\n";
  }
}
