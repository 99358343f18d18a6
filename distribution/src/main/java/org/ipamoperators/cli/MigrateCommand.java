package org.ipamoperators.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.ipamoperators.cli.migrate.ClusterReader;
import org.ipamoperators.cli.migrate.Facts.Found;
import org.ipamoperators.cli.migrate.MigrationPlanner;
import org.ipamoperators.cli.migrate.MigrationReport;
import org.ipamoperators.cli.migrate.MigrationReport.Section;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code ipam migrate}: what a switch from the old operators keeps, what blocks it, and its steps. Reads only. */
@Command(name = "migrate", mixinStandardHelpOptions = true,
    description = {
        "Finds egressip-ipam-operator, keepalived-operator, vip-allocator-operator and k8s-eip-operator in the",
        "cluster (their CRDs, Deployments and objects) and reports, for each, what the new controller adopts",
        "unchanged (egress addresses, router ids, IP reservations, Elastic IPs, finalizers), what blocks the",
        "switch and how to fix it (the old operator still running, a CRD another server-side-apply manager owns,",
        "a stored version our CRD does not serve, an object the new controller would refuse), and the ordered",
        "steps: scale the old operator to zero, hand its CRD over, install the chart, run ipam audit.",
        "Nothing in the cluster is changed."},
    footer = {"", "Exit status: 0 nothing blocks the switch; 1 something does; 2 the cluster could not be read."})
final class MigrateCommand implements Callable<Integer> {
  enum Format { text, json }

  @Spec
  CommandSpec spec;

  @Mixin
  KubeconfigOption cluster = new KubeconfigOption();

  @Option(names = {"-o", "--output"}, defaultValue = "text",
      description = "output format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE})")
  Format output;

  @Option(names = "--chart", paramLabel = "REF", description = "the chart the steps install (default: the"
      + " chart of this build, ipam-operators-<version>.tgz)")
  String chart;

  @Option(names = "--release", defaultValue = "ipam", description = "the Helm release (default: ${DEFAULT-VALUE})")
  String release;

  @Option(names = {"-n", "--namespace"}, defaultValue = "ipam-operators",
      description = "the namespace the chart goes to (default: ${DEFAULT-VALUE})")
  String namespace;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    List<Found> found;
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(cluster.config()).build()) {
      found = new ClusterReader(client).read();
    } catch (KubernetesClientException e) {
      err.println("ipam migrate: could not read the cluster: " + StartFailure.describe(e));
      err.flush();
      return 2;
    }
    String ref = chart != null ? chart : "ipam-operators-" + IpamVersion.version() + ".tgz";
    // The CRD files are the chart's: the steps unpack it, which leaves them in ipam-operators/crds.
    MigrationReport report = MigrationPlanner.plan(found,
        new MigrationPlanner.Target(ref, "ipam-operators/crds", release, namespace));
    if (output == Format.json) {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("blocked", report.blocked());
      json.put("operators", report.sections());
      out.println(JsonOutput.document("MigrationReport", json));
    } else {
      out.print(text(report));
    }
    out.flush();
    return report.blocked() ? 1 : 0;
  }

  static String text(MigrationReport report) {
    StringBuilder b = new StringBuilder();
    for (Section s : report.sections()) {
      if (!s.installed()) {
        b.append(s.operator()).append(": not installed\n");
        continue;
      }
      b.append(s.operator()).append(" -> controllers.").append(s.controller()).append(' ').append(s.counts()).append('\n');
      s.adopted().forEach(a -> b.append("  adopted: ").append(a).append('\n'));
      s.blockers().forEach(x -> b.append("  BLOCKER: ").append(x.problem()).append("\n    fix: ").append(x.fix()).append('\n'));
      b.append("  steps:\n");
      for (int i = 0; i < s.steps().size(); i++) {
        b.append("    ").append(i + 1).append(". ").append(s.steps().get(i)).append('\n');
      }
    }
    b.append(report.blocked() ? "blocked: fix each BLOCKER above, then run the steps\n"
        : "nothing blocks the switch: run the steps in order\n");
    return b.toString();
  }

}
