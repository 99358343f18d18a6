package org.ipamoperators.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.cli.audit.Repairs;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.core.audit.AuditReport;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.core.audit.LedgerAudit;
import org.ipamoperators.core.audit.Repair;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code ipam audit}: compares the ledgers with what the cluster shows, and repairs only what is safe. */
@Command(name = "audit", mixinStandardHelpOptions = true,
    description = {
        "Compares every claim of the shared ledgers (IPClaims, the entries of IPBlocks, IDClaims)",
        "with every place the controllers publish what they hold (egress IP annotations,",
        "NetNamespaces, OVN EgressIPs, Service ingress, KeepalivedGroup router ids) and reports",
        "duplicates, double claims (e.g. an address in an IPBlock entry and an IPClaim at once),",
        "leaks (claimed, shown by nobody), orphans (shown, claimed by nobody) and drift.",
        "With --repair it releases only claims whose owner is gone and that nothing shows: a",
        "claim object is deleted, an IPBlock entry removed from its block, each guarded by the",
        "resourceVersion the audit read."},
    footer = {"", "Exit status: 0 clean; 1 findings; 2 the cluster could not be read."})
final class AuditCommand implements Callable<Integer> {
  enum Format { text, json }

  @Spec
  CommandSpec spec;

  @Option(names = "--kubeconfig", paramLabel = "FILE",
      description = "kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
  Path kubeconfig;

  @Option(names = {"-o", "--output"}, defaultValue = "text",
      description = "output format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE})")
  Format output;

  @Option(names = "--leak-grace", defaultValue = "5m", converter = DurationConverter.class,
      description = "how old an unpublished claim must be to count as a leak (default: ${DEFAULT-VALUE})")
  Duration leakGrace;

  @Option(names = "--repair", description = "release the claims the report marks safe to release")
  boolean repair;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    AuditReport report;
    List<String> repaired = new ArrayList<>();
    ClusterFacts facts;
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config()).build()) {
      facts = ClusterFacts.read(client);
      report = LedgerAudit.audit(facts.entries(), facts.publications(), new AuditOptions(Instant.now(), leakGrace));
      if (repair) {
        repaired = new Repairs(client).apply(facts, report.repairs());
      }
    } catch (KubernetesClientException e) {
      err.println("ipam audit: could not read the cluster: " + StartFailure.describe(e));
      err.flush();
      return 2;
    }
    if (output == Format.json) {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("claims", report.claims());
      json.put("publications", report.publications());
      json.put("counts", report.counts());
      json.put("findings", report.findings());
      json.put("safeRepairs", report.repairs().stream().map(r -> Map.of("claim", r.entry().reference(),
          "owner", r.entry().owner(), "reason", r.reason())).toList());
      json.put("repaired", repaired);
      json.put("kindsNotServed", facts.notServed());
      out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(json));
    } else {
      out.print(text(report, repaired, facts.notServed()));
    }
    out.flush();
    return report.clean() ? 0 : 1;
  }

  static String text(AuditReport report, List<String> repaired, List<String> notServed) {
    StringBuilder b = new StringBuilder();
    b.append("audited ").append(report.claims()).append(" claims against ").append(report.publications())
        .append(" publications").append(notServed.isEmpty() ? "" : " (not served here: " + String.join(", ", notServed) + ")")
        .append('\n');
    report.counts().forEach((k, n) -> b.append(String.format("  %-13s %d%n", k.name().toLowerCase(java.util.Locale.ROOT), n)));
    for (Finding f : report.findings()) {
      b.append(f.kind()).append(": ").append(f.message()).append('\n');
    }
    for (Repair r : report.repairs()) {
      b.append("safe to release: ").append(r.entry().reference()).append(" (").append(r.reason()).append(")\n");
    }
    for (String r : repaired) {
      b.append("repaired: ").append(r).append('\n');
    }
    if (report.clean()) {
      b.append("clean: every claim is shown by its owner and nothing is shown twice\n");
    }
    return b.toString();
  }

  private Config config() throws Exception {
    if (kubeconfig == null) {
      return Config.autoConfigure(null);
    }
    return Config.fromKubeconfig(Files.readString(kubeconfig));
  }
}
