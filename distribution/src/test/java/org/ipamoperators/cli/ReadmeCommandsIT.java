package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.LoadBalancerIngressBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.vip.api.VipAnnotations;
import org.ipamoperators.vip.legacy.LegacyKinds;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Address;
import software.amazon.awssdk.services.ec2.model.DomainType;
import software.amazon.awssdk.services.ec2.model.ResourceType;
import software.amazon.awssdk.services.ec2.model.Tag;
import software.amazon.awssdk.services.ec2.model.TagSpecification;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.Release;
import com.marcnuri.helm.UpgradeCommand;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.testsupport.TestBinaries;
import org.ipamoperators.testsupport.crds.CrdInstaller;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every command of README.md's shell blocks is run here as written, or is in {@link #NOT_RUN} with the reason this
 * environment cannot run it; a command that is neither fails {@link #everyReadmeCommandIsRunOrListedWithAReason}.
 * Commands run with bash in a scratch directory that links the checkout's {@code distribution/} and
 * {@code examples/} (so {@code java -jar distribution/target/ipam.jar} is the jar this build made), against a
 * private kube-apiserver through {@code KUBECONFIG}, with the test environment's kubectl first on the PATH. Helm
 * commands run through Helm's own library (helm-java) with the arguments bash gives them ({@code --set-json}, which
 * helm-java lacks, as a values file). The steps {@code ipam migrate} prints for a cluster of all four old operators
 * are run the same way, in their order.
 */
class ReadmeCommandsIT {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final String IPAM = "java -jar distribution/target/ipam.jar";
  private static final String CHART = "distribution/target/helm/ipam-operators-0.1.0-SNAPSHOT.tgz";
  private static final Duration WAIT = Duration.ofSeconds(90);

  static final String PLAN_EXAMPLE = IPAM + " plan examples/egress-two-zones.yaml";
  static final String HELM_INSTALL = "helm install ipam " + CHART + " -n ipam-operators --create-namespace"
      + " --set image.repository=$REGISTRY/ipam-operators --set controllers.vip.enabled=true";
  static final String MIGRATE = IPAM + " migrate --chart " + CHART;
  static final String DEMO = IPAM + " demo";
  static final String GET_EGRESS = "kubectl get egressipams,namespaces,nodes,ipclaims,ipblocks,hostsubnets -o yaml"
      + " > cluster.yaml";
  static final String PLAN_EGRESS = IPAM + " plan cluster.yaml # or examples/egress-objects.yaml";
  static final String GET_VIPS = "kubectl get ipgroups,services,namespaces,ipclaims -A -o yaml > vips.yaml";
  static final String PLAN_VIPS = IPAM + " plan vips.yaml # or examples/vip-objects.yaml";
  static final String OPERATOR = IPAM + " operator --controllers egressip --provider-dir ./providers";
  static final String VERSION = IPAM + " --version";
  static final String COMPLETION = "source <(" + IPAM + " completion bash)";

  /** The README commands the tests below run, as README writes them (whitespace collapsed). */
  static final Set<String> RUN = Set.of(PLAN_EXAMPLE, HELM_INSTALL, MIGRATE, DEMO, GET_EGRESS, PLAN_EGRESS, GET_VIPS,
      PLAN_VIPS, OPERATOR, VERSION, COMPLETION);

  private static final String IMAGES = "needs root for the image base (mmdebstrap) and pushes to a container registry,"
      + " which the test environment has none of; scripts/test.sh builds the images as root, ImageIT and"
      + " ControllerImagesIT run and check them";

  /** README's shell-block commands that this environment does not run, each with the reason. */
  private static final Map<String, String> NOT_RUN_BLOCKS = Map.of(
      "mvn -q -B package -DskipTests -pl distribution -am", "the build itself: this test runs in the build that made"
          + " distribution/target/ipam.jar and the chart",
      "scripts/test.sh", "runs every test, this one among them (.ci/run runs it)",
      "mvn -q -B package -DskipTests -pl distribution -am -Dipam.image.base=\"$(sudo bash scripts/image-base.sh)\"",
      IMAGES,
      "for c in egressip vip keepalived eip; do", IMAGES,
      "skopeo copy oci-archive:distribution/target/images/$c.tar docker://$REGISTRY/ipam-operators/$c:0.1.0-SNAPSHOT",
      IMAGES,
      "done", IMAGES,
      "sudo java -jar distribution/target/ipam.jar demo --node", "needs root and the real-node tier (sudo bash"
          + " scripts/test-env.sh); DemoOnNodeIT runs ipam demo --node on it",
      IPAM + " operator --controllers egressip,vip,keepalived,eip", "the eip controller calls AWS (its quota and"
          + " Elastic IPs) and the tests reach no cloud: EipManifestsIT runs eip against moto; the provider-dir line"
          + " runs the same command with egressip",
      "source <(" + IPAM + " completion zsh)", "needs zsh, which the test environment lacks; it is the script the"
          + " bash line sources (CompletionCommandTest checks it)");

  private static final String BUILD = "a build of the project: this test runs inside one";

  /** README's inline commands that this environment does not run, each with the reason. */
  private static final Map<String, String> NOT_RUN_INLINE = Map.of(
      "sudo bash scripts/test-env.sh", "prepares the test environment this test runs in (scripts/test.sh and .ci/run"
          + " run it first)",
      "mvn install", BUILD,
      "mvn -B install", BUILD + " (scripts/test.sh without arguments)",
      "mvn -B verify", BUILD + " (scripts/test.sh with arguments)",
      "mvn -Prelease install", BUILD + ", with the sources and javadoc jars",
      "mvn versions:set -DnewVersion=0.2.0-SNAPSHOT", "changes the version in every POM: a step of starting a new API"
          + " line, not something a test may do to the checkout",
      "scripts/test.sh -pl ipam-core", "runs ipam-core's tests, which this build runs",
      "mvn -q -B package -DskipTests -pl benchmarks -am && java -jar benchmarks/target/benchmarks.jar",
      "the JMH benchmarks: minutes of CPU measured alone (docs/benchmarks.md), not a check");

  /** README commands this environment cannot run, each with the reason. */
  static final Map<String, String> NOT_RUN = java.util.stream.Stream.of(NOT_RUN_BLOCKS, NOT_RUN_INLINE)
      .flatMap(m -> m.entrySet().stream())
      .collect(java.util.stream.Collectors.toUnmodifiableMap(Map.Entry::getKey, Map.Entry::getValue));

  /**
   * The only rewriting of a command: a migration step that calls the {@code ipam} launcher runs the jar (README's
   * own way of calling it).
   */
  static final Map<String, String> SUBSTITUTIONS = Map.of("ipam ", IPAM + " ");

  private static final Pattern FENCE = Pattern.compile("(?ms)^```(sh|bash|shell|console)\\s*\\n(.*?)^```");
  private static final Pattern INLINE = Pattern.compile("`([^`]+)`");
  /** An inline code span that is a command line (a tool with arguments), not a name. */
  private static final Pattern INLINE_COMMAND = Pattern.compile("(mvn|sudo|kubectl|helm|bash) .+|scripts/\\S+\\.sh .+");
  private static final Pattern STEP = Pattern.compile("(?m)^ {4}\\d+\\. (.+)$");

  @Test
  void everyReadmeCommandIsRunOrListedWithAReason() throws IOException {
    List<String> commands = commands(Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8));
    assertThat(commands).isNotEmpty();
    assertThat(commands).allSatisfy(c -> assertThat(RUN.contains(c) || NOT_RUN.containsKey(c))
        .as("README command neither run by ReadmeCommandsIT nor listed in its NOT_RUN with a reason: %s", c).isTrue());
    assertThat(commands).as("every command the tests run or list is still in README").containsAll(RUN)
        .containsAll(NOT_RUN.keySet());
  }

  /**
   * Each command line of the shell blocks (continuations joined, whitespace collapsed, {@code &&} lists split), then
   * each inline code span outside them that calls the jar or is a command line of another tool.
   */
  static List<String> commands(String markdown) {
    List<String> out = new ArrayList<>();
    Matcher block = FENCE.matcher(markdown);
    while (block.find()) {
      String joined = block.group(2).replaceAll("\\\\\\n\\s*", " ");
      for (String line : joined.split("\\n")) {
        String c = line.trim().replaceAll("\\s+", " ");
        if (!c.isEmpty() && !c.startsWith("#")) {
          for (String part : c.split(" && ")) {
            out.add(part.trim());
          }
        }
      }
    }
    Matcher inline = INLINE.matcher(markdown.replaceAll("(?ms)^```.*?^```", ""));
    while (inline.find()) {
      String c = inline.group(1).trim().replaceAll("\\s+", " ");
      if (c.contains("distribution/target/ipam.jar") || INLINE_COMMAND.matcher(c).matches()) {
        out.add(c);
      }
    }
    return out;
  }

  @Test
  void planAHelmInstallAndTheObjectsPlansRunAsWritten(@TempDir Path dir) throws Exception {
    KubeApiServer server = KubeApiServer.startPrivate();
    try (KubernetesClient admin = server.newClient()) {
      Shell sh = new Shell(scratch(dir), OperatorRun.writeKubeconfig(dir, server.kubeconfig()));
      Shell.Result plan = sh.run(PLAN_EXAMPLE);
      assertThat(plan.exit()).as(plan.toString()).isZero();
      assertThat(plan.out()).contains("Allocations", "Placement", "Problems");

      Release release = sh.helm(HELM_INSTALL);
      assertThat(release.getStatus()).isEqualTo("deployed");
      List<Deployment> deployments = admin.apps().deployments().inNamespace("ipam-operators").list().getItems();
      assertThat(deployments).extracting(d -> d.getMetadata().getName())
          .containsExactlyInAnyOrder("ipam-egressip", "ipam-vip");
      assertThat(deployments).allSatisfy(d -> assertThat(d.getSpec().getTemplate().getSpec().getContainers().get(0)
          .getImage()).startsWith(Shell.REGISTRY + "/ipam-operators/"));

      // OpenShift SDN's kinds: hostsubnets is in the README's kubectl get; the controller then watches both.
      install(admin, ThirdPartyCrd.HOST_SUBNET.definition());
      install(admin, ThirdPartyCrd.NET_NAMESPACE.definition());
      apply(admin, ROOT.resolve("examples/egress-objects.yaml"));
      apply(admin, ROOT.resolve("examples/vip-objects.yaml"));
      for (String[] pair : new String[][] {{GET_EGRESS, PLAN_EGRESS, "EgressIPAM"}, {GET_VIPS, PLAN_VIPS, "Service"}}) {
        Shell.Result get = sh.run(pair[0]);
        assertThat(get.exit()).as(get.toString()).isZero();
        Shell.Result planned = sh.run(pair[1]);
        assertThat(planned.exit()).as(planned.toString()).isIn(0, 1);
        assertThat(planned.out()).as(planned.toString()).contains(pair[2]);
      }

      runOperatorUntilReady(sh);
    } finally {
      server.stop();
    }
  }

  /** {@code ipam operator ... --provider-dir ./providers} serves its probes on port 8080 and stops on SIGTERM. */
  private static void runOperatorUntilReady(Shell sh) throws Exception {
    Files.createDirectories(sh.dir().resolve("providers"));
    Process operator = sh.start(OPERATOR, "operator");
    try {
      HttpClient http = HttpClient.newHttpClient();
      sh.await("operator", () -> !operator.isAlive() || http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:8080/readyz")).build(),
          HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
      assertThat(operator.isAlive()).as(sh.log("operator")).isTrue();
      String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:8080/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      assertThat(ExportedMetrics.served(metrics)).contains("ipam_operator_leader");
      operator.destroy();
      assertThat(operator.waitFor(60, TimeUnit.SECONDS)).as(sh.log("operator")).isTrue();
      assertThat(operator.exitValue()).as(sh.log("operator")).isZero();
    } finally {
      operator.destroyForcibly();
    }
  }

  /**
   * A cluster of all four old operators, each with its CRDs as it ships them, its samples and what it holds (an
   * egress IP, router ids, a Service's address, an Elastic IP in moto): {@code ipam migrate}'s steps run in the
   * order printed. Each section's audit runs once the operator the chart got runs, from the jar with the
   * Deployment's own arguments (no kubelet here), and is clean; afterwards nothing blocks and nothing that was
   * assigned has changed.
   */
  @Test
  void theMigrationReportAndEveryStepItPrintsRunAsWritten(@TempDir Path dir) throws Exception {
    MotoServer moto = MotoServer.shared();
    moto.reset();
    KubeApiServer server = KubeApiServer.startPrivate();
    Map<String, Process> operators = new LinkedHashMap<>();
    try (KubernetesClient admin = server.newClient(); Ec2Client ec2 = moto.ec2Client()) {
      oldEgressOperator(admin);
      oldKeepalivedOperator(admin);
      oldVipOperator(admin);
      Address held = oldEipOperator(admin, ec2, moto.endpoint());
      Shell sh = new Shell(scratch(dir), OperatorRun.writeKubeconfig(dir, server.kubeconfig()));
      Shell.Result report = sh.run(MIGRATE);
      assertThat(report.exit()).as(report.toString()).isEqualTo(1);
      assertThat(report.out()).as(report.toString()).contains("egressip-ipam-operator -> controllers.egressip",
          "adopted: Namespace pay: egress IPs 192.169.0.5 kept (EgressIPAM egressipam-baremetal)", "BLOCKER: Deployment",
          "adopted: KeepalivedGroup keepalived-operator/keepalivedgroup-workers: router ids {shop/web=3} kept",
          "adopted: IP 192.0.2.10: claimed for Service shop/web-lb in IPGroup web-pool",
          "BLOCKER: IPGroup ipgroup-sample would be refused",
          "adopted: Eip shop/web: Elastic IP " + held.allocationId() + " (" + held.publicIp() + ") kept");
      // The one fix that is no command: the vip project's own sample IPGroup has no spec, which ours refuses.
      GenericKubernetesResource sample = admin.genericKubernetesResources("paas.org/v1", "IPGroup")
          .withName("ipgroup-sample").get();
      sample.getAdditionalProperties().put("spec", Map.of("segment", "203.0.113.0/24", "excludedIPs", List.of()));
      admin.resource(sample).update();
      List<String> steps = new ArrayList<>();
      Matcher m = STEP.matcher(report.out());
      while (m.find()) {
        steps.add(m.group(1));
      }
      // egressip, keepalived, vip: scale, tar, CRD hand-over, helm, audit; eip (scaled to zero already): no scale.
      assertThat(steps).as(report.out()).hasSize(19);
      for (String step : steps) {
        if (step.startsWith("helm ")) {
          assertThat(sh.helm(step).getStatus()).as(step).isEqualTo("deployed");
        } else if (step.startsWith("ipam audit")) {
          startChartOperators(sh, admin, operators);
          // Clean once the controller has taken over what the old operator left (until then: orphans).
          Shell.Result[] last = new Shell.Result[1];
          sh.await(() -> operators.values().stream().map(Process::isAlive).toList() + "\n" + last[0], () -> {
            last[0] = sh.run(substituted(step));
            return last[0].exit() == 0 || operators.values().stream().anyMatch(p -> !p.isAlive());
          });
          assertThat(last[0].exit()).as(last[0] + "\n" + operatorLogs(sh, operators)).isZero();
        } else {
          Shell.Result r = sh.run(substituted(step));
          assertThat(r.exit()).as(r.toString()).isZero();
        }
      }
      for (String[] old : new String[][] {{"egressip-ipam-operator", "egressip-ipam-operator-controller-manager"},
          {"keepalived-operator", "keepalived-operator-controller-manager"},
          {"keepalived-allocator-operator", "keepalived-allocator-operator-controller-manager"}}) {
        assertThat(admin.apps().deployments().inNamespace(old[0]).withName(old[1]).get().getSpec().getReplicas())
            .as(old[1]).isZero();
      }
      assertThat(admin.apps().deployments().inNamespace("ipam-operators").list().getItems())
          .extracting(d -> d.getMetadata().getName())
          .containsExactlyInAnyOrder("ipam-egressip", "ipam-keepalived", "ipam-vip", "ipam-eip");
      // Real kubectl's --force-conflicts took the eip CRD from k8s-eip-operator's server-side-apply manager.
      assertThat(admin.apiextensions().v1().customResourceDefinitions().withName("eips.materialize.cloud").get()
          .getMetadata().getManagedFields()).extracting(f -> f.getManager()).contains("kubectl");
      // Every CRD is ours now: they keep the old groups and kinds, yet are not taken for the old operators'; every
      // part is done and nothing blocks.
      Shell.Result after = sh.run(MIGRATE);
      assertThat(after.exit()).as(after.toString()).isZero();
      for (String section : List.of("egressip-ipam-operator ->", "keepalived-operator ->", "vip-allocator-operator ->",
          "k8s-eip-operator ->")) {
        assertThat(after.out()).as(after.toString()).contains(section);
        String part = after.out().substring(after.out().indexOf(section)).split("\n(?=\\S)")[0];
        assertThat(part).as(after.toString()).doesNotContain("BLOCKER", "kubectl scale", "--force-conflicts");
      }
      assertThat(after.out()).contains("adopted: Namespace pay: egress IPs 192.169.0.5 kept",
          "router ids {shop/web=3} kept", "Elastic IP " + held.allocationId() + " (" + held.publicIp() + ") kept");
      nothingAssignedChanged(admin, ec2, held);
    } finally {
      for (Process p : operators.values()) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      server.stop();
    }
  }

  /** What the old operators had assigned is what the new controllers hold: no address or router id moved. */
  private static void nothingAssignedChanged(KubernetesClient admin, Ec2Client ec2, Address held) {
    assertThat(admin.namespaces().withName("pay").get().getMetadata().getAnnotations())
        .containsEntry(EgressAnnotations.EGRESSIPS, "192.169.0.5");
    GenericKubernetesResource group = admin.genericKubernetesResources("redhatcop.redhat.io/v1alpha1",
        "KeepalivedGroup").inNamespace("keepalived-operator").withName("keepalivedgroup-workers").get();
    assertThat(((Map<?, ?>) group.getAdditionalProperties().get("status")).get("routerIDs")).as("router ids")
        .isEqualTo(Map.of("shop/web", 3));
    assertThat(admin.resources(IDClaim.class).list().getItems()).as("the ledger holds router id 3 for the group")
        .anySatisfy(c -> {
          assertThat(c.getSpec().id()).isEqualTo(3);
          assertThat(c.getSpec().owner().name()).isEqualTo("keepalivedgroup-workers");
        });
    assertThat(admin.services().inNamespace("shop").withName("web-lb").get().getStatus().getLoadBalancer()
        .getIngress()).extracting(LoadBalancerIngress::getIp).containsExactly("192.0.2.10");
    GenericKubernetesResource eip = admin.genericKubernetesResources("materialize.cloud/v2", "Eip").inNamespace("shop")
        .withName("web").get();
    Map<?, ?> status = (Map<?, ?>) eip.getAdditionalProperties().get("status");
    assertThat(status.get("allocationId")).isEqualTo(held.allocationId());
    assertThat(status.get("publicIpAddress")).isEqualTo(held.publicIp());
    assertThat(eip.getMetadata().getFinalizers()).containsExactly(EipNames.EIP_FINALIZER);
    assertThat(ec2.describeAddresses().addresses()).as("moto's Elastic IPs")
        .extracting(Address::allocationId, Address::publicIp)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(held.allocationId(), held.publicIp()));
  }

  /**
   * Each Deployment the chart made that is not running yet, run from the jar as its pod would run it: the
   * container's own arguments and environment, with a free loopback port, the test's kubeconfig and the release's
   * namespace for the Lease (a pod's own). The eip controller gets moto's credentials in place of the pod's IAM role.
   */
  private static void startChartOperators(Shell sh, KubernetesClient admin, Map<String, Process> running)
      throws Exception {
    for (Deployment d : admin.apps().deployments().inNamespace("ipam-operators").list().getItems()) {
      String name = d.getMetadata().getName();
      if (running.containsKey(name)) {
        continue;
      }
      Container c = d.getSpec().getTemplate().getSpec().getContainers().get(0);
      List<String> args = new ArrayList<>(c.getArgs().stream().filter(a -> !a.startsWith("--http-port")).toList());
      args.addAll(List.of("--http-port=" + LoopbackPorts.freePort(), "--bind-address=127.0.0.1",
          "--kubeconfig=" + sh.kubeconfig(), "--namespace=ipam-operators"));
      Map<String, String> env = new LinkedHashMap<>();
      for (EnvVar v : c.getEnv()) {
        if (v.getValue() != null && !v.getName().equals("JAVA_TOOL_OPTIONS")) { // the container's heap sizing
          env.put(v.getName(), v.getValue());
        }
      }
      env.putAll(Map.of("AWS_ACCESS_KEY_ID", "test", "AWS_SECRET_ACCESS_KEY", "test", "AWS_EC2_METADATA_DISABLED",
          "true"));
      running.put(name, OperatorProcess.start(sh.dir(), name, args, env));
    }
  }

  private static String operatorLogs(Shell sh, Map<String, Process> operators) throws IOException {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<String, Process> e : operators.entrySet()) {
      String log = sh.log(e.getKey());
      b.append("=== ").append(e.getKey()).append(e.getValue().isAlive() ? " (running)" : " (exited)").append('\n')
          .append(log.length() > 6000 ? log.substring(log.length() - 6000) : log).append('\n');
    }
    return b.toString();
  }

  @Test
  void theVersionAndTheBashCompletionRunAsWritten(@TempDir Path dir) throws Exception {
    Shell sh = new Shell(scratch(dir), dir.resolve("no-kubeconfig"));
    Shell.Result version = sh.run(VERSION);
    assertThat(version.exit()).as(version.toString()).isZero();
    assertThat(version.out().trim()).as("README says the jar prints the project's version").isEqualTo("ipam 0.1.0-SNAPSHOT");
    // Sourced as written; the same shell then shows what it registered.
    Shell.Result completion = sh.run(COMPLETION + "; complete -p ipam");
    assertThat(completion.exit()).as(completion.toString()).isZero();
    assertThat(completion.out()).contains("-F _complete_ipam ipam");
    assertThat(completion.err()).isEmpty();
  }

  @Test
  void theDemoRunsUntilInterrupted(@TempDir Path dir) throws Exception {
    TestBinaries.fromEnvironment().kubernetesBinDir(); // fails with the setup hint when the binaries are missing
    Shell sh = new Shell(scratch(dir), dir.resolve("no-kubeconfig"));
    Process demo = sh.start(DEMO, "demo");
    try {
      await().atMost(Duration.ofSeconds(120)).until(() -> sh.out("demo").contains("Ctrl-C") || !demo.isAlive());
      assertThat(demo.isAlive()).as(sh.log("demo")).isTrue();
      assertThat(sh.out("demo")).containsPattern("namespace team-a +egress IPs 192\\.0\\.2\\.")
          .containsPattern("Service team-a/shop \\(LoadBalancer\\) got \\[198\\.51\\.100\\.\\d+\\]");
      new ProcessBuilder("kill", "-INT", Long.toString(demo.pid())).start().waitFor();
      assertThat(demo.waitFor(60, TimeUnit.SECONDS)).as(sh.log("demo")).isTrue();
    } finally {
      demo.destroyForcibly();
    }
  }

  private static String substituted(String step) {
    for (Map.Entry<String, String> s : SUBSTITUTIONS.entrySet()) {
      if (step.startsWith(s.getKey())) {
        return s.getValue() + step.substring(s.getKey().length());
      }
    }
    return step;
  }

  /** A working directory holding the checkout's distribution/ and examples/ as links, and the files commands write. */
  private static Path scratch(Path dir) throws IOException {
    Path work = Files.createDirectories(dir.resolve("work"));
    for (String linked : List.of("distribution", "examples")) {
      Files.createSymbolicLink(work.resolve(linked), ROOT.resolve(linked));
    }
    return work;
  }

  /**
   * k8s-eip-operator's CRD server-side applied by its field manager (as it does at each start), an Eip holding an
   * Elastic IP as the old operator leaves it (allocated with its tags, recorded in the status, its finalizer; its
   * pod not running), and its Deployment scaled to zero with the settings the helm step takes over. Returns the
   * address.
   */
  private static Address oldEipOperator(KubernetesClient admin, Ec2Client ec2, URI endpoint) throws IOException {
    admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("eip").endMetadata().build()).create();
    try (InputStream in = ReadmeCommandsIT.class.getClassLoader().getResourceAsStream("migrate/eip/00-crd.json")) {
      CustomResourceDefinition crd = admin.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
      admin.apiextensions().v1().customResourceDefinitions().resource(crd).fieldManager(MigrateIT.EIP_MANAGER)
          .serverSideApply();
      CrdInstaller.awaitEstablished(admin, crd.getMetadata().getName(), CrdInstaller.ESTABLISH_TIMEOUT);
    }
    GenericKubernetesResource eip = new GenericKubernetesResource();
    eip.setApiVersion("materialize.cloud/v2");
    eip.setKind("Eip");
    eip.setMetadata(new ObjectMetaBuilder().withName("web").withNamespace("shop")
        .withFinalizers(EipNames.EIP_FINALIZER).build());
    eip.getAdditionalProperties().put("spec", Map.of("selector", Map.of("pod", Map.of("podName", "web-0"))));
    String uid = admin.resource(eip).fieldManager(MigrateIT.EIP_MANAGER).serverSideApply().getMetadata().getUid();
    String cluster = "test";
    List<Tag> tags = List.of(tag(EipNames.TAG_UID, uid), tag(EipNames.TAG_NAME, "web"),
        tag(EipNames.TAG_NAMESPACE, "shop"), tag(EipNames.TAG_CLUSTER, cluster), tag(EipNames.TAG_POD, "web-0"),
        tag(EipNames.TAG_NAME_AWS, "eip-operator:" + cluster + ":shop:web"));
    String id = ec2.allocateAddress(r -> r.domain(DomainType.VPC).tagSpecifications(TagSpecification.builder()
        .resourceType(ResourceType.ELASTIC_IP).tags(tags).build())).allocationId();
    Address a = ec2.describeAddresses(r -> r.allocationIds(id)).addresses().get(0);
    admin.genericKubernetesResources("materialize.cloud/v2", "Eip").inNamespace("shop").withName("web")
        .subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"status\":{\"allocationId\":\""
            + a.allocationId() + "\",\"publicIpAddress\":\"" + a.publicIp() + "\"}}");
    admin.apps().deployments().inNamespace("eip").resource(new DeploymentBuilder().withNewMetadata()
        .withName("eip-operator").endMetadata().withNewSpec().withReplicas(0).withNewSelector()
        .addToMatchLabels("app", "eip-operator").endSelector().withNewTemplate().withNewMetadata()
        .addToLabels("app", "eip-operator").endMetadata().withNewSpec().addNewContainer().withName("manager")
        .withImage("materialize/k8s-eip-operator").addNewEnv().withName("CLUSTER_NAME").withValue(cluster).endEnv()
        .addNewEnv().withName("AWS_REGION").withValue(MotoServer.REGION.id()).endEnv()
        .addNewEnv().withName("AWS_ENDPOINT_URL").withValue(endpoint.toString()).endEnv()
        .addNewEnv().withName("DEFAULT_TAGS").withValue("{\"team\":\"shop\"}").endEnv().endContainer().endSpec()
        .endTemplate().endSpec().build()).create();
    return a;
  }

  private static Tag tag(String key, String value) {
    return Tag.builder().key(key).value(value).build();
  }

  /**
   * keepalived-operator's CRD and sample as they ship, the router id it recorded for a Service whose external IP
   * the group announces, and its running Deployment.
   */
  private static void oldKeepalivedOperator(KubernetesClient admin) {
    for (String ns : List.of("keepalived-operator", "shop")) {
      admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
    }
    for (CustomResourceDefinition crd : CrdInstaller.load("migrate/keepalived/00-crd.yaml")) {
      install(admin, crd);
    }
    createAll(admin, "migrate/keepalived/10-keepalivedgroup.yaml", "keepalived-operator");
    GenericKubernetesResource group = admin.genericKubernetesResources("redhatcop.redhat.io/v1alpha1",
        "KeepalivedGroup").inNamespace("keepalived-operator").withName("keepalivedgroup-workers").get();
    group.getAdditionalProperties().put("status", Map.of("routerIDs", Map.of("shop/web", 3)));
    admin.resource(group).updateStatus();
    admin.services().inNamespace("shop").resource(new ServiceBuilder().withNewMetadata().withName("web")
        .addToAnnotations(KeepalivedAnnotations.GROUP, "keepalived-operator/keepalivedgroup-workers")
        .endMetadata().withNewSpec().withType("ClusterIP").withExternalIPs("198.51.100.20").addNewPort().withPort(80)
        .endPort().endSpec().build()).create();
    oldDeployment(admin, "keepalived-operator", "keepalived-operator-controller-manager",
        "registry.example/redhat-cop/keepalived-operator:v1.5.0");
  }

  /**
   * vip-allocator-operator's CRDs and samples as they ship, a pool, the IP object reserving a Service's address and
   * that Service as the old operator left it (its address in the status, its finalizer), its running Deployment.
   */
  private static void oldVipOperator(KubernetesClient admin) {
    for (CustomResourceDefinition crd : CrdInstaller.load("migrate/vip/00-crd-ipgroups.yaml",
        "migrate/vip/00-crd-ips.yaml")) {
      install(admin, crd);
    }
    createAll(admin, "migrate/vip/10-ipgroup.yaml", null);
    createAll(admin, "migrate/vip/10-ip.yaml", null);
    GenericKubernetesResource pool = new GenericKubernetesResource();
    pool.setApiVersion("paas.org/v1");
    pool.setKind("IPGroup");
    pool.setMetadata(new ObjectMetaBuilder().withName("web-pool").build());
    pool.getAdditionalProperties().put("spec", Map.of("segment", "192.0.2.0/24", "excludedIPs", List.of("192.0.2.0")));
    admin.resource(pool).create();
    GenericKubernetesResource ip = new GenericKubernetesResource();
    ip.setApiVersion("paas.org/v1");
    ip.setKind("IP");
    ip.setMetadata(new ObjectMetaBuilder().withName("192.0.2.10").addToLabels(LegacyKinds.LABEL_IPGROUP, "web-pool")
        .addToAnnotations(LegacyKinds.OWNER_ANNOTATION, "shop/web-lb").build());
    admin.resource(ip).create();
    admin.services().inNamespace("shop").resource(new ServiceBuilder().withNewMetadata().withName("web-lb")
        .withFinalizers(VipAnnotations.LEGACY_FINALIZER).endMetadata().withNewSpec().withType("LoadBalancer")
        .withAllocateLoadBalancerNodePorts(false).addNewPort().withPort(80).endPort().endSpec().build()).create();
    admin.services().inNamespace("shop").withName("web-lb").editStatus(s -> {
      s.getStatus().getLoadBalancer().setIngress(List.of(new LoadBalancerIngressBuilder().withIp("192.0.2.10").build()));
      return s;
    });
    oldDeployment(admin, "keepalived-allocator-operator", "keepalived-allocator-operator-controller-manager",
        "registry.example/paas-team-324/keepalived-allocator-operator:v1.0.0");
  }

  private static void createAll(KubernetesClient admin, String resource, String namespace) {
    try (InputStream in = ReadmeCommandsIT.class.getClassLoader().getResourceAsStream(resource)) {
      for (HasMetadata o : admin.load(in).items()) {
        o.getMetadata().setNamespace(namespace);
        admin.resource(o).create();
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** An old operator's Deployment as its kustomize manifests name it, in a namespace of its own, one replica. */
  private static void oldDeployment(KubernetesClient admin, String ns, String name, String image) {
    if (admin.namespaces().withName(ns).get() == null) {
      admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
    }
    admin.apps().deployments().inNamespace(ns).resource(new DeploymentBuilder().withNewMetadata()
        .withName(name).endMetadata().withNewSpec().withReplicas(1).withNewSelector().addToMatchLabels("app", name)
        .endSelector().withNewTemplate().withNewMetadata().addToLabels("app", name).endMetadata().withNewSpec()
        .addNewContainer().withName("manager").withImage(image).endContainer().endSpec().endTemplate().endSpec()
        .build()).create();
  }

  /** egressip-ipam-operator's CRD as it ships, its sample, a namespace holding an egress IP, its running Deployment. */
  private static void oldEgressOperator(KubernetesClient admin) throws IOException {
    for (String ns : List.of("egressip-ipam-operator")) {
      admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
    }
    for (CustomResourceDefinition crd : CrdInstaller.load("migrate/egressip/00-crd.yaml")) {
      install(admin, crd);
    }
    try (InputStream in = ReadmeCommandsIT.class.getClassLoader()
        .getResourceAsStream("migrate/egressip/10-egressipam-baremetal.yaml")) {
      for (HasMetadata o : admin.load(in).items()) {
        admin.resource(o).create();
      }
    }
    admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("pay")
        .addToAnnotations(EgressAnnotations.EGRESSIPAM, "egressipam-baremetal")
        .addToAnnotations(EgressAnnotations.EGRESSIPS, "192.169.0.5").endMetadata().build()).create();
    oldDeployment(admin, "egressip-ipam-operator", "egressip-ipam-operator-controller-manager",
        "registry.example/redhat-cop/egressip-ipam-operator:v1.2.4");
  }

  private static void install(KubernetesClient admin, CustomResourceDefinition crd) {
    admin.apiextensions().v1().customResourceDefinitions().resource(crd).create();
    CrdInstaller.awaitEstablished(admin, crd.getMetadata().getName(), CrdInstaller.ESTABLISH_TIMEOUT);
  }

  private static void apply(KubernetesClient admin, Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      for (HasMetadata o : admin.load(in).items()) {
        admin.resource(o).serverSideApply();
      }
    }
  }

  /** bash in the scratch directory, with KUBECONFIG, REGISTRY, this JVM's java and the test kubectl first on PATH. */
  record Shell(Path dir, Path kubeconfig) {
    static final String REGISTRY = "registry.example/team";

    record Result(String command, int exit, String out, String err) {
      @Override
      public String toString() {
        return command + " exited " + exit + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
      }
    }

    Result run(String command) throws Exception {
      String name = "cmd-" + System.nanoTime();
      Process p = start(command, name);
      if (!p.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("still running after " + WAIT + ": " + command + "\n" + log(name));
      }
      return new Result(command, p.exitValue(), out(name), read(name + ".err"));
    }

    Process start(String command, String name) throws IOException {
      ProcessBuilder pb = new ProcessBuilder("bash", "-c", command).directory(dir.toFile())
          .redirectOutput(dir.resolve(name + ".out").toFile()).redirectError(dir.resolve(name + ".err").toFile());
      String java = Path.of(ProcessHandle.current().info().command().orElseThrow()).getParent().toString();
      Map<String, String> env = pb.environment();
      env.put("PATH", java + ":" + TestBinaries.fromEnvironment().kubernetesBinDir() + ":" + env.get("PATH"));
      env.put("KUBECONFIG", kubeconfig.toString());
      env.put("REGISTRY", REGISTRY);
      return pb.start();
    }

    /** The words bash makes of a helm command (variables expanded, quotes removed), run through helm-java. */
    Release helm(String command) throws Exception {
      Result words = run("set -- " + command.substring(command.indexOf(' ') + 1) + "; printf '%s\\0' \"$@\"");
      assertThat(words.exit()).as(words.toString()).isZero();
      return helmJava(List.of(words.out().split("\0")), dir, kubeconfig);
    }

    /** Waits for the condition, failing with what the process {@code name} printed. */
    void await(String name, java.util.concurrent.Callable<Boolean> condition) throws IOException {
      try {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(condition);
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        throw new AssertionError(e.getMessage() + "\n" + log(name), e);
      }
    }

    /** Waits for the condition, failing with what {@code describe} says then. */
    void await(java.util.function.Supplier<String> describe, java.util.concurrent.Callable<Boolean> condition) {
      try {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1))
            .ignoreExceptions().until(condition);
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        throw new AssertionError(e.getMessage() + "\n" + describe.get(), e);
      }
    }

    String out(String name) throws IOException {
      return read(name + ".out");
    }

    String log(String name) throws IOException {
      return "--- stdout\n" + read(name + ".out") + "\n--- stderr\n" + read(name + ".err");
    }

    private String read(String file) throws IOException {
      Path f = dir.resolve(file);
      return Files.exists(f) ? Files.readString(f, StandardCharsets.UTF_8) : "";
    }
  }

  /**
   * {@code helm install|upgrade [--install] NAME CHART} with the flags README and the migration steps use, through
   * helm-java; a flag it does not know fails the test rather than being dropped.
   */
  static Release helmJava(List<String> words, Path dir, Path kubeconfig) {
    List<String> positional = new ArrayList<>();
    Map<String, String> set = new LinkedHashMap<>();
    Map<String, String> setJson = new LinkedHashMap<>();
    Set<String> flags = new TreeSet<>();
    String namespace = null;
    for (int i = 1; i < words.size(); i++) {
      String w = words.get(i);
      switch (w) {
        case "-n", "--namespace" -> namespace = words.get(++i);
        case "--set" -> {
          String[] kv = words.get(++i).split("=", 2);
          set.put(kv[0], kv[1]);
        }
        case "--set-json" -> {
          String[] kv = words.get(++i).split("=", 2);
          setJson.put(kv[0], kv[1]);
        }
        case "--install", "--create-namespace", "--reuse-values" -> flags.add(w);
        default -> {
          assertThat(w).as("a helm flag ReadmeCommandsIT does not pass to helm-java: %s", words).doesNotStartWith("-");
          positional.add(w);
        }
      }
    }
    assertThat(positional).as("helm %s NAME CHART: %s", words.get(0), words).hasSize(2);
    Path values = setJson.isEmpty() ? null : setJsonValues(setJson, set.keySet(), dir);
    Helm chart = new Helm(dir.resolve(positional.get(1)));
    if (words.get(0).equals("install")) {
      InstallCommand c = chart.install().withName(positional.get(0)).withNamespace(namespace).withKubeConfig(kubeconfig);
      c = flags.contains("--create-namespace") ? c.createNamespace() : c;
      c = values == null ? c : c.withValuesFile(values);
      for (Map.Entry<String, String> e : set.entrySet()) {
        c = c.set(e.getKey(), e.getValue());
      }
      return c.call();
    }
    assertThat(words.get(0)).as("helm %s", words).isEqualTo("upgrade");
    UpgradeCommand c = chart.upgrade().withName(positional.get(0)).withNamespace(namespace).withKubeConfig(kubeconfig);
    c = flags.contains("--install") ? c.install() : c;
    c = flags.contains("--create-namespace") ? c.createNamespace() : c;
    c = flags.contains("--reuse-values") ? c.reuseValues() : c;
    c = values == null ? c : c.withValuesFile(values);
    for (Map.Entry<String, String> e : set.entrySet()) {
      c = c.set(e.getKey(), e.getValue());
    }
    return c.call();
  }

  /**
   * helm-java has no {@code --set-json}: each {@code KEY=JSON} becomes that JSON value at the dotted key of a values
   * file passed with {@code -f}. Helm gives {@code --set} precedence over {@code -f}, as over {@code --set-json},
   * so the two may not name the same key, or one inside the other.
   */
  static Path setJsonValues(Map<String, String> setJson, Set<String> setKeys, Path dir) {
    ObjectMapper json = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    Map<String, Object> root = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : setJson.entrySet()) {
      assertThat(setKeys).as("--set and --set-json on one key: %s", e.getKey())
          .noneMatch(k -> k.equals(e.getKey()) || k.startsWith(e.getKey() + ".") || e.getKey().startsWith(k + "."));
      assertThat(e.getKey()).as("a --set-json key with an escaped dot or an index").doesNotContain("\\", "[");
      String[] path = e.getKey().split("\\.");
      Map<String, Object> at = root;
      for (int i = 0; i < path.length - 1; i++) {
        at = cast(at.computeIfAbsent(path[i], k -> new LinkedHashMap<String, Object>()));
      }
      try {
        at.put(path[path.length - 1], json.readValue(e.getValue(), Object.class));
      } catch (IOException x) {
        throw new AssertionError("--set-json " + e.getKey() + "=" + e.getValue() + ": not one JSON value", x);
      }
    }
    try {
      Path file = Files.createTempFile(dir, "set-json-", ".json");
      return Files.writeString(file, json.writeValueAsString(root));
    } catch (IOException x) {
      throw new java.io.UncheckedIOException(x);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> cast(Object o) {
    assertThat(o).as("a --set-json key inside another's value").isInstanceOf(Map.class);
    return (Map<String, Object>) o;
  }
}
