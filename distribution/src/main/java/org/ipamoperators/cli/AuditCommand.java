package org.ipamoperators.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.ipamoperators.cli.audit.AuditProgress;
import org.ipamoperators.cli.audit.CloudFacts;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.cli.audit.EipFacts;
import org.ipamoperators.cli.audit.Repairs;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.core.audit.AuditReport;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.core.audit.LedgerAudit;
import org.ipamoperators.core.audit.Repair;
import org.ipamoperators.egressip.cloud.CloudSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
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
        "resourceVersion the audit read.",
        "With --cloud it also reads the nodes' cloud interfaces (AWS; configured as the egress",
        "controller is) and reports addresses attached by the egress operator and claimed by",
        "nobody, attached to two nodes, or not on the node its HostSubnet routes them through;",
        "a node whose interface cannot be read is reported as unknown. With --eip-cluster-name",
        "it also compares each Eip's status with the Elastic IPs EC2 tags with that cluster.",
        "Nothing on a cloud is ever changed by the audit."},
    footer = {"", "Exit status: 0 clean; 1 findings; 2 the cluster could not be read."})
final class AuditCommand implements Callable<Integer> {
  enum Format { text, json }

  /** The controllers an audit can be limited to: {@link ClusterFacts#ALL} (AuditCommandTest keeps them equal). */
  enum Controller { egressip, vip, keepalived, eip }

  @Spec
  CommandSpec spec;

  @Mixin
  KubeconfigOption cluster = new KubeconfigOption();

  @Option(names = {"-o", "--output"}, defaultValue = "text",
      description = "output format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE})")
  Format output;

  @Option(names = "--controllers", split = ",", paramLabel = "NAME",
      description = "audit only these controllers' claims and what they publish, comma-separated:"
          + " ${COMPLETION-CANDIDATES} (default: all; a migration audits each controller as it is switched, while"
          + " the old operators of the others still hold their addresses)")
  List<Controller> controllers;

  @Option(names = "--leak-grace", defaultValue = "5m", converter = DurationConverter.class,
      description = "how old an unpublished claim must be to count as a leak (default: ${DEFAULT-VALUE})")
  Duration leakGrace;

  @Option(names = "--repair", description = "release the claims the report marks safe to release")
  boolean repair;

  @Option(names = "--cloud", description = "also read the egress addresses on the nodes' cloud interfaces (off by"
      + " default: the audit then reads the cluster only)")
  boolean cloud;

  @Option(names = "--eip-cluster-name", paramLabel = "NAME", defaultValue = "${CLUSTER_NAME:-}",
      description = "with --cloud: also compare the Eips' status with EC2's Elastic IPs tagged with this cluster name"
          + " (the eip controller's; env CLUSTER_NAME)")
  String eipClusterName;

  @Option(names = "--platform", paramLabel = "TYPE",
      description = "with --cloud: the platform type (AWS...) when there is no Infrastructure to say it (env IPAM_PLATFORM)")
  String platform;

  @Option(names = "--aws-region", paramLabel = "REGION",
      description = "with --cloud: AWS region when the Infrastructure gives none (env IPAM_AWS_REGION)")
  String awsRegion;

  @Option(names = "--aws-endpoint", paramLabel = "URL",
      description = "with --cloud: EC2 endpoint override, such as a VPC endpoint (env IPAM_AWS_ENDPOINT)")
  String awsEndpoint;

  @Option(names = "--operator-namespace", paramLabel = "NAMESPACE",
      description = "with --cloud: namespace of the egress operator's cloud credentials Secret (env"
          + " IPAM_OPERATOR_NAMESPACE; default: the client's namespace)")
  String operatorNamespace;

  @Option(names = "--progress", arity = "0..1", paramLabel = "BOOLEAN", fallbackValue = "true",
      description = "say on stderr what has been read, as it is read (default: when stderr is a terminal)")
  Boolean progress;

  /** Progress lines on stderr, with the time since the command started; none unless asked or on a terminal. */
  private AuditProgress progress(PrintWriter err) {
    boolean on = progress != null ? progress : System.console() != null;
    if (!on) {
      return AuditProgress.NONE;
    }
    return (kind, count) -> {
      err.printf("ipam audit: %d %s%s (%.1f s)%n", count, kind, count == 1 ? "" : "s",
          (System.nanoTime() - started) / 1e9);
      err.flush();
    };
  }

  private final long started = System.nanoTime();

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    AuditReport report;
    List<String> repaired = new ArrayList<>();
    ClusterFacts facts;
    CloudFacts cloudFacts = CloudFacts.NONE;
    EipFacts eipFacts = EipFacts.NONE;
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(cluster.config()).build()) {
      facts = ClusterFacts.read(client, audited(), progress(err));
      if (cloud) {
        cloudFacts = CloudFacts.read(client, cloudSettings(), platform != null ? platform : CloudFacts.platformOverride());
      }
      if (cloud && eipClusterName != null && !eipClusterName.isBlank()) {
        String type = platform != null ? platform : CloudFacts.platformOverride();
        eipFacts = EipFacts.read(facts.eips(), eipClusterName.trim(), CloudFacts.awsSettings(client, cloudSettings(),
            org.ipamoperators.egressip.network.Platform.detect(client, type)));
      }
      report = LedgerAudit.audit(facts.entries(), facts.publications(), cloudFacts.view(), eipFacts.findings(),
          new AuditOptions(Instant.now(), leakGrace));
      progress(err).read("finding", report.findings().size());
      if (repair) {
        repaired = new Repairs(client).apply(facts, report.repairs());
      }
    } catch (KubernetesClientException e) {
      err.println("ipam audit: could not read the cluster: " + StartFailure.describe(e));
      err.flush();
      return 2;
    } catch (CloudFacts.CloudUnreadable e) {
      err.println("ipam audit: could not read the cloud: " + e.getMessage());
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
      if (cloudFacts.note() != null) {
        json.put("cloud", cloudFacts.note());
      }
      if (eipFacts.note() != null) {
        json.put("elasticIps", eipFacts.note());
      }
      out.println(JsonOutput.document("AuditReport", json));
    } else {
      out.print((cloudFacts.note() == null ? "" : "cloud: " + cloudFacts.note() + "\n")
          + (eipFacts.note() == null ? "" : "elastic IPs: " + eipFacts.note() + "\n")
          + text(report, repaired, facts.notServed()));
    }
    out.flush();
    return report.clean() ? 0 : 1;
  }

  /** The controllers {@code --controllers} names; all when none. */
  private java.util.Set<String> audited() {
    return controllers == null || controllers.isEmpty() ? ClusterFacts.ALL
        : new java.util.TreeSet<>(controllers.stream().map(Enum::name).toList());
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

  /** The egress controller's settings, the options given winning over the environment. */
  private CloudSettings cloudSettings() {
    CloudSettings env = CloudSettings.fromEnvironment();
    Map<String, String> overrides = new java.util.HashMap<>();
    if (awsRegion != null && !awsRegion.isBlank()) {
      overrides.put("aws.region", awsRegion.trim());
    }
    if (awsEndpoint != null && !awsEndpoint.isBlank()) {
      overrides.put("aws.endpoint", awsEndpoint.trim());
    }
    return new CloudSettings(overrides, operatorNamespace != null ? operatorNamespace : env.operatorNamespace(),
        env.provider());
  }

}
