package org.ipamoperators.core.audit;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What an audit found.
 *
 * @param claims how many ledger entries were checked
 * @param publications how many publications were checked
 * @param findings every problem, sorted by resource then kind
 * @param repairs the releases that are provably safe, sorted by resource
 */
public record AuditReport(int claims, int publications, List<Finding> findings, List<Repair> repairs) {
  /** Copies the lists. */
  public AuditReport {
    findings = List.copyOf(findings);
    repairs = List.copyOf(repairs);
  }

  /**
   * Counts per kind, every kind present (zero when none), for metrics and summaries.
   *
   * @return kind to count
   */
  public Map<FindingKind, Integer> counts() {
    Map<FindingKind, Integer> counts = new TreeMap<>();
    for (FindingKind k : FindingKind.values()) {
      counts.put(k, 0);
    }
    findings.forEach(f -> counts.merge(f.kind(), 1, Integer::sum));
    return counts;
  }

  /**
   * Whether the ledgers and the publications agree.
   *
   * @return true when there is no finding
   */
  public boolean clean() {
    return findings.isEmpty();
  }
}
