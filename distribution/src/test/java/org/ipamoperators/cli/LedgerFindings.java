package org.ipamoperators.cli;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.core.audit.LedgerAudit;

/** The audit of a run's resources once the ledger has settled. */
final class LedgerFindings {
  private LedgerFindings() {}

  /**
   * Audits the {@code controllers}' ledger against what is published, every second for at most {@code wait}, until
   * none of the findings {@code ours} accepts is left (the ledger settles a moment after the last publication:
   * released losers, late deletes); returns what the last audit found, for the caller to assert on.
   */
  static List<Finding> settled(KubernetesClient client, Set<String> controllers, Predicate<Finding> ours,
      Duration wait) {
    List<Finding> findings = new CopyOnWriteArrayList<>();
    try {
      await().atMost(wait).pollInterval(Duration.ofSeconds(1)).until(() -> {
        ClusterFacts facts = ClusterFacts.read(client, controllers);
        List<Finding> now = LedgerAudit.audit(facts.entries(), facts.publications(),
            new AuditOptions(Instant.now(), Duration.ZERO)).findings().stream().filter(ours).toList();
        findings.clear();
        findings.addAll(now);
        return now.isEmpty();
      });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      // the caller asserts on what the audit saw last
    }
    return List.copyOf(findings);
  }

  /** Findings about a resource (address) that starts with one of {@code prefixes}. */
  static Predicate<Finding> onResources(String... prefixes) {
    return f -> java.util.Arrays.stream(prefixes).anyMatch(p -> f.resource().value().startsWith(p));
  }
}
