package org.ipamoperators.cli.plan;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.ipamoperators.cli.JsonOutput;
import org.ipamoperators.core.plan.IpamPlanner;
import org.ipamoperators.core.plan.PlanInput;
import org.ipamoperators.core.plan.PlanResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code ipam plan FILE}: what the operators would allocate and place for a described cluster. */
@Command(name = "plan", mixinStandardHelpOptions = true,
    // The command list of `ipam --help` shows the header's first line (else a cut-off description line).
    header = "Plans a cluster described in YAML; changes nothing.",
    description = {
        "Reads a YAML description of pools, nodes, claimants and existing claims, and prints the",
        "allocations, the placement on nodes, the changes from today's state, and every",
        "unplaceable or conflicting item with its reason. Nothing is changed anywhere.",
        "",
        "FILE may instead hold Kubernetes objects as `kubectl get -o yaml` prints them (EgressIPAMs,",
        "IPGroups, Services, Namespaces, Nodes, IPClaims, IPBlocks, HostSubnets): each EgressIPAM is",
        "then decided by controller-egressip's own policy, and each LoadBalancer Service by",
        "controller-vip's own planner (kept, new and released addresses, problems), read from the",
        "objects as the controllers read the cluster."},
    footer = {"", "Exit status: 0 planned; 1 planned with problems and --fail-on-problems; 2 bad input."})
public final class PlanCommand implements Callable<Integer> {
  enum Format { text, json }

  @Spec
  CommandSpec spec;

  @Parameters(paramLabel = "FILE", description = "the plan file (YAML); see examples/")
  Path file;

  @Option(names = {"-o", "--output"}, defaultValue = "text",
      description = "output format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE})")
  Format output;

  @Option(names = "--fail-on-problems", description = "exit with 1 when anything is unallocated, conflicting or unplaceable")
  boolean failOnProblems;

  @Override
  public Integer call() throws Exception {
    String text = null;
    try {
      text = java.nio.file.Files.readString(file);
    } catch (java.io.IOException e) {
      // the plan file reader explains it
    }
    if (text != null && ClusterObjects.looksLikeObjects(text)) {
      return planObjects(text);
    }
    PlanInput input;
    try {
      input = PlanFileReader.read(file);
    } catch (PlanFileException e) {
      spec.commandLine().getErr().println("ipam plan: " + e.getMessage());
      return 2;
    }
    PlanResult result = IpamPlanner.plan(input);
    var anycast = PlanReport.anycastExcluded(input);
    if (output == Format.json) {
      spec.commandLine().getOut().println(JsonOutput.document("PlanReport", PlanReport.json(result, anycast)));
    } else {
      spec.commandLine().getOut().print(PlanReport.text(result, anycast));
    }
    spec.commandLine().getOut().flush();
    return failOnProblems && !result.clean() ? 1 : 0;
  }

  private int planObjects(String text) throws Exception {
    ClusterObjects objects;
    try {
      objects = ClusterObjects.parse(file.toString(), text);
    } catch (PlanFileException e) {
      spec.commandLine().getErr().println("ipam plan: " + e.getMessage());
      return 2;
    }
    var decided = EgressObjectsPlan.decide(objects, java.time.Instant.now());
    boolean vip = VipObjectsPlan.applies(objects);
    boolean egress = !decided.isEmpty() || !vip;
    var services = vip ? VipObjectsPlan.plan(objects) : List.<VipObjectsPlan.Planned>of();
    if (output == Format.json) {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("egressIPAMs", EgressObjectsPlan.json(decided, objects.ignored()).get("egressIPAMs"));
      json.put("services", VipObjectsPlan.json(services));
      json.put("ignoredKinds", objects.ignored());
      spec.commandLine().getOut().println(JsonOutput.document("ObjectsPlanReport", json));
    } else {
      StringBuilder out = new StringBuilder();
      if (egress) {
        out.append(EgressObjectsPlan.text(decided, vip ? Map.of() : objects.ignored()));
      }
      if (vip) {
        out.append(VipObjectsPlan.text(services));
        out.append(EgressObjectsPlan.ignoredLine(objects.ignored()));
      }
      spec.commandLine().getOut().print(out);
    }
    spec.commandLine().getOut().flush();
    boolean clean = decided.stream().allMatch(EgressObjectsPlan.Decided::clean)
        && services.stream().allMatch(VipObjectsPlan.Planned::clean);
    return failOnProblems && !clean ? 1 : 0;
  }
}
