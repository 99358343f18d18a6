package org.ipamoperators.core.audit;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Compares ledger claims with publications, resource by resource, as Kubernetes' own IP repair loop
 * compares IPAddress objects with Services. Deterministic: the same inputs in any order give the same
 * report. Cost is linear in the inputs (one sort), nothing is enumerated beyond them.
 */
public final class LedgerAudit {
  private LedgerAudit() {}

  /**
   * Runs the audit.
   *
   * @param entries every claim of the ledgers audited
   * @param publications every place that shows a resource in use
   * @param options the time of the audit and the leak grace
   * @return the findings and the provably safe repairs
   */
  public static AuditReport audit(Collection<LedgerEntry> entries, Collection<Publication> publications,
      AuditOptions options) {
    return audit(entries, publications, CloudView.NONE, options);
  }

  /**
   * Runs the audit with what the clouds' interfaces show. An address marked as this suite's on an
   * interface counts as shown: a claim on it is never proposed for release. Cloud findings: an
   * attached address no ledger claims (ORPHAN), an address attached to interfaces of two nodes
   * (DUPLICATE), a claimed and published address the cluster network routes through a node whose
   * interface does not hold it (DRIFT, naming where it is instead, if anywhere). A node that could
   * not be read is one UNKNOWN finding, and nothing placed on it is called missing. Cloud interfaces
   * are never repaired here.
   *
   * @param entries every claim of the ledgers audited
   * @param publications every place that shows a resource in use
   * @param cloud what the clouds' interfaces show, or {@link CloudView#NONE}
   * @param options the time of the audit and the leak grace
   * @return the findings and the provably safe repairs
   */
  public static AuditReport audit(Collection<LedgerEntry> entries, Collection<Publication> publications,
      CloudView cloud, AuditOptions options) {
    return audit(entries, publications, cloud, List.of(), options);
  }

  /**
   * Runs the audit with what the clouds' interfaces show and the findings of other checks over the same
   * objects (such as {@link EipChecks}), merged into one report.
   *
   * @param entries every claim of the ledgers audited
   * @param publications every place that shows a resource in use
   * @param cloud what the clouds' interfaces show, or {@link CloudView#NONE}
   * @param more findings made by other checks
   * @param options the time of the audit and the leak grace
   * @return the findings and the provably safe repairs
   */
  public static AuditReport audit(Collection<LedgerEntry> entries, Collection<Publication> publications,
      CloudView cloud, List<Finding> more, AuditOptions options) {
    Map<Resource, List<LedgerEntry>> claims = new TreeMap<>();
    entries.forEach(e -> claims.computeIfAbsent(e.resource(), r -> new ArrayList<>()).add(e));
    Map<Resource, List<Publication>> shown = new TreeMap<>();
    publications.forEach(p -> shown.computeIfAbsent(p.resource(), r -> new ArrayList<>()).add(p));
    Map<Resource, List<Attachment>> attached = new TreeMap<>();
    cloud.attachments().forEach(a -> attached.computeIfAbsent(a.resource(), r -> new ArrayList<>()).add(a));
    Map<Resource, List<Placement>> placed = new TreeMap<>();
    cloud.placements().forEach(p -> placed.computeIfAbsent(p.resource(), r -> new ArrayList<>()).add(p));
    Set<Resource> all = new TreeSet<>(claims.keySet());
    all.addAll(shown.keySet());
    all.addAll(attached.keySet());

    List<Finding> findings = new ArrayList<>();
    List<Repair> repairs = new ArrayList<>();
    for (Resource r : all) {
      List<LedgerEntry> cs = claims.getOrDefault(r, List.of());
      List<Publication> ps = shown.getOrDefault(r, List.of());
      List<Attachment> as = attached.getOrDefault(r, List.of());
      check(r, cs, ps, !as.isEmpty(), options, findings, repairs);
      if (cloud.read()) {
        CloudChecks.check(r, cs, ps, as, placed.getOrDefault(r, List.of()), cloud, findings);
      }
    }
    cloud.unknown().forEach((node, why) -> findings.add(new Finding(FindingKind.UNKNOWN, new Resource("node", node),
        List.of(node), "the cloud interface of node " + node + " could not be read (" + why + "): the addresses"
        + " placed on it are neither confirmed nor reported missing")));
    findings.addAll(more);
    findings.sort(Comparator.comparing(Finding::resource).thenComparing(Finding::kind)
        .thenComparing(Finding::message));
    repairs.sort(Comparator.comparing((Repair rep) -> rep.entry().resource())
        .thenComparing(rep -> rep.entry().reference()));
    return new AuditReport(entries.size(), publications.size(), findings, repairs);
  }

  private static void check(Resource r, List<LedgerEntry> cs, List<Publication> ps, boolean attached,
      AuditOptions o, List<Finding> findings, List<Repair> repairs) {
    Set<String> owners = cs.stream().map(LedgerEntry::owner).collect(Collectors.toCollection(TreeSet::new));
    Set<String> holders = ps.stream().map(Publication::holder).collect(Collectors.toCollection(TreeSet::new));
    if (holders.size() > 1) {
      findings.add(new Finding(FindingKind.DUPLICATE, r, List.copyOf(holders), r + " is published by "
          + holders.size() + " holders: " + where(ps) + "; "
          + (owners.isEmpty() ? "no ledger claims it" : "the ledger names " + String.join(", ", owners))
          + ". Only one may keep it: the others need another address"));
    }
    if (owners.size() > 1) {
      findings.add(new Finding(FindingKind.DOUBLE_CLAIM, r, List.copyOf(owners), r + " is claimed by "
          + owners.size() + " owners: " + cs.stream().map(e -> e.owner() + " (" + e.reference() + ")")
              .sorted().collect(Collectors.joining(", "))));
    }
    if (cs.isEmpty()) {
      if (ps.isEmpty()) {
        return; // only on a cloud interface: reported by the cloud checks
      }
      findings.add(new Finding(FindingKind.ORPHAN, r, List.copyOf(holders), r + " is published ("
          + where(ps) + ") but no ledger claims it: any controller may hand it out again"));
      return;
    }
    for (String holder : holders) {
      if (!owners.contains(holder)) {
        findings.add(new Finding(FindingKind.DRIFT, r, sorted(owners, holder), r + " is published for "
            + holder + " (" + where(ps.stream().filter(p -> p.holder().equals(holder)).toList())
            + ") but the ledger names " + String.join(", ", owners)));
      }
    }
    if (!ps.isEmpty()) {
      return;
    }
    for (LedgerEntry e : cs) {
      if (e.claimedAt() == null || e.claimedAt().plus(o.leakGrace()).isAfter(o.now())) {
        continue; // young, or of unknown age: a controller may be about to publish it
      }
      String state = e.ownerExists() ? "its owner exists, so it is only reported"
          : attached ? "its owner is gone, but it is still on a cloud interface, so it is only reported"
          : "its owner is gone, so releasing it is safe";
      findings.add(new Finding(FindingKind.LEAK, r, List.of(e.owner()), r + " is claimed by " + e.owner()
          + " (" + e.reference() + ", since " + e.claimedAt() + ") and published by nobody; " + state));
      if (!e.ownerExists() && !attached) {
        repairs.add(new Repair(e, "owner " + e.owner() + " no longer exists and nothing publishes " + r));
      }
    }
  }

  private static List<String> sorted(Set<String> owners, String holder) {
    Set<String> s = new TreeSet<>(owners);
    s.add(holder);
    return List.copyOf(s);
  }

  private static String where(List<Publication> ps) {
    return ps.stream().map(p -> p.holder() + " in " + p.where()).sorted().collect(Collectors.joining(", "));
  }
}
