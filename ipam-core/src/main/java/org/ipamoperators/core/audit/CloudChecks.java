package org.ipamoperators.core.audit;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** The checks of one address against the clouds' interfaces, for {@link LedgerAudit}. */
final class CloudChecks {
  private CloudChecks() {}

  static void check(Resource r, List<LedgerEntry> cs, List<Publication> ps, List<Attachment> as,
      List<Placement> placements, CloudView cloud, List<Finding> findings) {
    Set<String> nodes = as.stream().map(Attachment::node).collect(Collectors.toCollection(TreeSet::new));
    if (nodes.size() > 1) {
      findings.add(new Finding(FindingKind.DUPLICATE, r, List.copyOf(nodes), r + " is attached to the interfaces of "
          + nodes.size() + " nodes: " + where(as) + ". The cloud routes it to one of them only"));
    }
    if (!as.isEmpty() && cs.isEmpty()) {
      findings.add(new Finding(FindingKind.ORPHAN, r, List.copyOf(nodes), r + " is on an interface (" + where(as)
          + "), marked as attached by this suite, and claimed by nobody: the egress operator takes such an"
          + " address off; the audit only reports it"));
      return;
    }
    if (cs.isEmpty() || ps.isEmpty() || placements.isEmpty()) {
      return; // unclaimed, unpublished or not routed through any node: no interface is expected to hold it
    }
    List<String> missing = new ArrayList<>();
    Set<String> expected = new TreeSet<>();
    for (Placement p : placements) {
      expected.add(p.node());
      if (!nodes.contains(p.node()) && cloud.described().contains(p.node())) {
        missing.add(p.node() + " (" + p.where() + ")");
      }
    }
    List<Attachment> elsewhere = as.stream().filter(a -> !expected.contains(a.node())).toList();
    if (missing.isEmpty() && elsewhere.isEmpty()) {
      return;
    }
    Set<String> parties = new TreeSet<>(expected);
    parties.addAll(nodes);
    String owners = cs.stream().map(LedgerEntry::owner).distinct().sorted().collect(Collectors.joining(", "));
    StringBuilder m = new StringBuilder(r + " (claimed by " + owners + ") ");
    if (!missing.isEmpty()) {
      m.append("is routed through ").append(String.join(", ", missing.stream().sorted().toList()))
          .append(" but is not on that node's interface");
      m.append(!as.isEmpty() ? "" : cloud.unknown().isEmpty() ? "; it is on no node's interface"
          : "; it is on no interface that could be read");
    }
    if (!elsewhere.isEmpty()) {
      m.append(missing.isEmpty() ? "" : "; ").append("is on ").append(where(elsewhere))
          .append(", a node the cluster network does not route it through (")
          .append(placements.stream().map(p -> p.node() + " in " + p.where()).sorted().collect(Collectors.joining(", ")))
          .append(")");
    }
    findings.add(new Finding(FindingKind.DRIFT, r, List.copyOf(parties), m.toString()));
  }

  private static String where(List<Attachment> as) {
    return as.stream().map(Attachment::where).sorted().distinct().collect(Collectors.joining(", "));
  }
}
