package org.ipamoperators.cli.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.ipamoperators.cli.DurationConverter;
import org.ipamoperators.cli.IpamCommand;
import org.ipamoperators.cli.IpamRun;
import org.ipamoperators.cli.OperatorRun;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine;

/** {@code ipam operator}'s options and its refusals, without a cluster. */
class OperatorCommandTest {

  static IpamRun ipam(String... args) {
    return IpamRun.of(args);
  }

  static OperatorCommand parsed(String... args) {
    CommandLine cl = IpamCommand.commandLine();
    cl.parseArgs(args);
    return cl.getSubcommands().get("operator").getCommand();
  }

  @Test
  void unknownControllerIsRefusedWithTheKnownOnes() {
    IpamRun r = ipam("operator", "--controllers", "egressip,keepalive");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("ipam operator: unknown controller 'keepalive'; known: egressip, vip, keepalived, eip"
        + System.lineSeparator());
  }

  @Test
  void controllersAreRequired() {
    IpamRun r = ipam("operator");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("Missing required option: '--controllers=NAME'");
  }

  @Test
  void emptyControllerListIsRefused() {
    IpamRun r = ipam("operator", "--controllers", ",");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).startsWith("ipam operator: --controllers names no controller");
  }

  @Test
  void badNamespaceAndLeaseNamesAreRefused() {
    assertThat(ipam("operator", "--controllers", "egressip", "--namespace", "Not_A_Namespace").err())
        .startsWith("ipam operator: --namespace 'Not_A_Namespace' is not a valid namespace name");
    assertThat(ipam("operator", "--controllers", "egressip", "--lease-name", "UPPER").exit()).isEqualTo(2);
    assertThat(ipam("operator", "--controllers", "egressip", "--renew-deadline", "20s").err())
        .contains("--renew-deadline must be shorter than --lease-duration");
  }

  @Test
  void missingKubeconfigIsBadInput() {
    IpamRun r = ipam("operator", "--controllers", "egressip", "--kubeconfig", "/nonexistent/kubeconfig",
        "--http-port", "0", "--bind-address", "127.0.0.1");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("ipam operator: cannot read kubeconfig /nonexistent/kubeconfig"
        + System.lineSeparator());
  }

  /** A kubeconfig for a cluster where nothing listens. */
  static Path unreachable(Path dir) throws Exception {
    Path kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        clusters:
        - name: nowhere
          cluster:
            server: https://127.0.0.1:1
            insecure-skip-tls-verify: true
        users:
        - name: u
          user:
            token: not-a-token
        contexts:
        - name: nowhere
          context: {cluster: nowhere, user: u}
        current-context: nowhere
        """);
    return kubeconfig;
  }

  @Test
  void unreachableClusterFailsFastWithOneLine(@TempDir Path dir) throws Exception {
    Path kubeconfig = unreachable(dir);
    int port = LoopbackPorts.freePort();
    long started = System.nanoTime();
    IpamRun r = ipam("operator", "--controllers", "egressip", "--kubeconfig", kubeconfig.toString(),
        "--http-port", Integer.toString(port), "--bind-address", "127.0.0.1");
    Duration took = Duration.ofNanos(System.nanoTime() - started);

    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).isEqualTo("ipam operator: cannot reach the Kubernetes API at https://127.0.0.1:1/: "
        + "connection refused" + System.lineSeparator());
    assertThat(took).isLessThan(Duration.ofSeconds(20));
    assertThat(OperatorRun.statusOrRefused(port, "/healthz")).as("the HTTP port is closed again").isEqualTo(-1);
  }

  @Test
  void portInUseIsOneLine(@TempDir Path dir) throws Exception {
    try (var socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      IpamRun r = ipam("operator", "--controllers", "egressip", "--kubeconfig", unreachable(dir).toString(),
          "--http-port", Integer.toString(socket.getLocalPort()), "--bind-address", "127.0.0.1");
      assertThat(r.exit()).isEqualTo(1);
      assertThat(r.err()).isEqualTo("ipam operator: cannot serve HTTP on 127.0.0.1:" + socket.getLocalPort()
          + ": Address already in use" + System.lineSeparator());
    }
  }

  @Test
  void leaderElectionIsOnUnlessTurnedOff() {
    assertThat(parsed("operator", "--controllers", "egressip").leaderElection).isTrue();
    assertThat(parsed("operator", "--controllers", "egressip", "--leader-election").leaderElection).isTrue();
    assertThat(parsed("operator", "--controllers", "egressip", "--no-leader-election").leaderElection).isFalse();
  }

  @Test
  void defaults() {
    OperatorCommand c = parsed("operator", "--controllers", "egressip");
    assertThat(c.leaseName).isEqualTo("ipam-operators-leader");
    assertThat(c.httpPort).isEqualTo(8080);
    assertThat(c.bindAddress).isEqualTo("0.0.0.0");
    assertThat(c.installCrds).isFalse();
    assertThat(c.namespace).isNull();
    assertThat(c.leaseDuration).isEqualTo(Duration.ofSeconds(15));
    assertThat(c.renewDeadline).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.retryPeriod).isEqualTo(Duration.ofSeconds(2));
    if (!Files.exists(Path.of(io.fabric8.kubernetes.client.Config.KUBERNETES_NAMESPACE_PATH))) {
      // Outside a pod there is no service-account namespace file.
      assertThat(LeaseElection.defaultNamespace()).isEqualTo("ipam-operators");
    }
    assertThat(LeaseElection.defaultIdentity()).matches(".+_[0-9a-f]{8}");
  }

  @Test
  void helpListsTheControllersAndHidesTheTuningOptions() {
    IpamRun r = ipam("operator", "--help");
    assertThat(r.exit()).isZero();
    assertThat(r.out()).contains("controllers to run, comma-separated: egressip", "--[no-]leader-election",
        "--install-crds", "--bind-address", "Exit status:")
        .doesNotContain("--lease-duration", "--leader-identity");
    assertThat(ipam("--help").out()).contains("operator", "plan");
  }

  @Test
  void settingsOnceReadFromTheEnvironmentAreOptionsInTheHelp() {
    String help = ipam("operator", "--help").out();
    assertThat(help).contains("--keepalived-image", "IPAM_KEEPALIVED_IMAGE", "--keepalived-reloader-image",
        "--keepalived-router-id-grace-seconds", "--keepalived-allowed-images", "--keepalived-allowed-namespaces",
        "--keepalived-namespaces", "--keepalived-router-ids-per-namespace", "--keepalived-allow-group-programs",
        "--keepalived-metrics-ports", "--keepalived-secret-poll", "--platform", "IPAM_PLATFORM", "--aws-region",
        "--aws-endpoint", "--operator-namespace", "--egressip-writers", "--vip-handle-unclassed");
    var k = parsed("operator", "--controllers", "keepalived").keepalivedSettings();
    assertThat(k.keepalivedImage()).isEqualTo(System.getenv().getOrDefault("IPAM_KEEPALIVED_IMAGE",
        "ipam-operators/keepalived:0.1.0"));
    assertThat(k.metricsPorts().min()).isEqualTo(9650);
    assertThat(k.metricsPorts().max()).isEqualTo(9899);
    assertThat(k.allowedImages()).isEmpty();
    assertThat(k.routerIdsPerNamespace()).isZero();
    assertThat(k.allowGroupPrograms()).isFalse();
    var set = parsed("operator", "--controllers", "keepalived", "--keepalived-allowed-images", "a/b:*,c/d:1",
        "--keepalived-router-ids-per-namespace", "10", "--keepalived-allow-group-programs",
        "--keepalived-router-id-grace-seconds", "0").keepalivedSettings();
    assertThat(set.allowedImages()).containsExactly("a/b:*", "c/d:1");
    assertThat(set.routerIdsPerNamespace()).isEqualTo(10);
    assertThat(set.allowGroupPrograms()).isTrue();
    assertThat(set.routerIdGrace()).isZero();
  }

  @Test
  void badKeepalivedSettingsAreBadInput() {
    IpamRun r = ipam("operator", "--controllers", "keepalived", "--keepalived-metrics-ports", "9650:9700");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--keepalived-metrics-ports");
    assertThat(ipam("operator", "--controllers", "keepalived", "--keepalived-router-ids-per-namespace", "256").exit())
        .isEqualTo(2);
  }

  @Test
  void egressipSettingsAreOptionsWithEnvironmentFallbacks() {
    String help = ipam("operator", "--help").out().replaceAll("\\s+", " ");
    assertThat(help).contains("--platform", "env IPAM_PLATFORM", "--aws-region", "env IPAM_AWS_REGION",
        "--aws-endpoint", "env IPAM_AWS_ENDPOINT", "--operator-namespace", "env IPAM_OPERATOR_NAMESPACE",
        "--node-network-provider", "env IPAM_NODE_NETWORK_PROVIDER", "--egressip-writers", "env IPAM_EGRESSIP_WRITERS",
        "--egressip-incremental", "--egressip-full-plan-seconds", "--egressip-orphan-grace-seconds",
        "--egressip-orphan-grace-passes", "--provider-dir");
    var given = parsed("operator", "--controllers", "egressip", "--platform", "AWS", "--aws-region", "eu-west-1",
        "--aws-endpoint", "http://127.0.0.1:1", "--operator-namespace", "ops", "--node-network-provider", "aws",
        "--egressip-writers", "3", "--egressip-incremental=false", "--egressip-full-plan-seconds", "60",
        "--egressip-orphan-grace-seconds", "5", "--egressip-orphan-grace-passes", "3").egressSettings();
    assertThat(given.platform()).isEqualTo("AWS");
    assertThat(given.writers()).isEqualTo(3);
    assertThat(given.incremental()).isFalse();
    assertThat(given.fullPlanEvery()).isEqualTo(Duration.ofSeconds(60));
    assertThat(given.orphanGrace().minimum()).isEqualTo(Duration.ofSeconds(5));
    assertThat(given.orphanGrace().passes()).isEqualTo(3);
    assertThat(given.cloud().overrides()).containsExactlyInAnyOrderEntriesOf(java.util.Map.of("aws.region",
        "eu-west-1", "aws.endpoint", "http://127.0.0.1:1"));
    assertThat(given.cloud().operatorNamespace()).isEqualTo("ops");
    assertThat(given.cloud().provider()).isEqualTo("aws");
    if (System.getenv().keySet().stream().noneMatch(k -> k.startsWith("IPAM_"))) {
      var unset = parsed("operator", "--controllers", "egressip").egressSettings();
      assertThat(unset).isEqualTo(org.ipamoperators.egressip.EgressSettings.defaults());
    }
  }

  @Test
  void badEgressipAndVipSettingsStopTheStartNamingTheOption() {
    IpamRun writers = ipam("operator", "--controllers", "egressip", "--egressip-writers", "0");
    assertThat(writers.exit()).isEqualTo(2);
    assertThat(writers.err()).contains("--egressip-writers (env IPAM_EGRESSIP_WRITERS) must be 1 or more");
    IpamRun passes = ipam("operator", "--controllers", "egressip", "--egressip-orphan-grace-passes", "1");
    assertThat(passes.exit()).isEqualTo(2);
    assertThat(passes.err()).contains("--egressip-orphan-grace-passes");
    IpamRun sweep = ipam("operator", "--controllers", "vip", "--vip-sweep-interval", "5m");
    assertThat(sweep.exit()).isEqualTo(2);
    assertThat(sweep.err()).isEqualTo("ipam operator: --vip-sweep-interval (env IPAM_VIP_SWEEP_INTERVAL): '5m' is"
        + " neither an ISO-8601 duration (PT5M) nor a number of seconds" + System.lineSeparator());
    assertThat(ipam("operator", "--controllers", "vip", "--vip-sweep-interval", "0").err())
        .contains("--vip-sweep-interval (env IPAM_VIP_SWEEP_INTERVAL): must be positive");
  }

  @Test
  void vipSettingsAreOptionsWithEnvironmentFallbacks() {
    String help = ipam("operator", "--help").out().replaceAll("\\s+", " ");
    assertThat(help).contains("--vip-handle-unclassed", "env IPAM_VIP_HANDLE_UNCLASSED", "--vip-sweep-interval",
        "env IPAM_VIP_SWEEP_INTERVAL");
    var off = parsed("operator", "--controllers", "vip", "--vip-handle-unclassed=false", "--vip-sweep-interval",
        "PT30S").vipSettings();
    assertThat(off.handleUnclassed()).isFalse();
    assertThat(off.sweepInterval()).isEqualTo(Duration.ofSeconds(30));
    assertThat(parsed("operator", "--controllers", "vip", "--vip-handle-unclassed", "--vip-sweep-interval", "90")
        .vipSettings()).isEqualTo(new org.ipamoperators.vip.VipSettings(true, Duration.ofSeconds(90)));
    if (System.getenv(org.ipamoperators.vip.VipSettings.HANDLE_UNCLASSED) == null
        && System.getenv(org.ipamoperators.vip.VipSettings.SWEEP_INTERVAL) == null) {
      assertThat(parsed("operator", "--controllers", "vip").vipSettings())
          .isEqualTo(org.ipamoperators.vip.VipSettings.defaults());
    }
  }

  @Test
  void eipSettingsAreOptionsDefaultingToTheOldOperatorsVariables() {
    String help = ipam("operator", "--help").out().replaceAll("\\s+", " ");
    assertThat(help).contains("--eip-cluster-name", "env CLUSTER_NAME", "--eip-namespace", "env NAMESPACE",
        "--eip-default-tags", "env DEFAULT_TAGS", "--eip-aws-region", "env AWS_REGION", "--eip-aws-endpoint",
        "env AWS_ENDPOINT_URL", "--eip-resync-interval", "env EIP_RESYNC_INTERVAL", "--eip-orphan-sweep-interval",
        "--eip-failover-grace", "--eip-failover-recovery", "default: 2m", "--eip-node-mode-namespaces",
        "env EIP_NODE_MODE_NAMESPACES", "--eip-node-mode-node-selector", "env EIP_NODE_MODE_NODE_SELECTOR");

    var given = parsed("operator", "--controllers", "eip", "--eip-cluster-name", "prod", "--eip-aws-region",
        "eu-west-1", "--eip-namespace", "web", "--eip-default-tags", "{\"Stack\":\"mz\"}",
        "--eip-aws-endpoint", "http://127.0.0.1:1", "--eip-resync-interval", "45s").eipSettings();
    assertThat(given.clusterName()).isEqualTo("prod");
    assertThat(given.namespace()).isEqualTo("web");
    assertThat(given.defaultTags()).containsExactlyEntriesOf(java.util.Map.of("Stack", "mz"));
    assertThat(given.aws().region()).isEqualTo("eu-west-1");
    assertThat(given.aws().endpoint()).hasToString("http://127.0.0.1:1");
    assertThat(given.resyncInterval()).isEqualTo(Duration.ofSeconds(45));
    assertThat(given.sweepInterval()).isEqualTo(Duration.ofMinutes(10));
    assertThat(given.failoverGrace()).isEqualTo(Duration.ofSeconds(10));
    assertThat(given.nodeMode().allows("team-b")).as("node mode open by default").isTrue();
    assertThat(given.nodeMode().nodes().any()).isTrue();
    var strict = parsed("operator", "--controllers", "eip", "--eip-cluster-name", "prod", "--eip-aws-region",
        "eu-west-1", "--eip-node-mode-namespaces", "egress-gw,edge", "--eip-node-mode-node-selector",
        "node-role.example.com/egress in (true)").eipSettings();
    assertThat(strict.nodeMode().namespaces()).containsExactlyInAnyOrder("egress-gw", "edge");
    assertThat(strict.nodeMode().nodes().admits(java.util.Map.of("node-role.example.com/egress", "true"))).isTrue();
    assertThat(strict.nodeMode().nodes().admits(java.util.Map.of())).isFalse();

    // an option given wins over the variable (this JVM's environment may set CLUSTER_NAME)
    assertThat(parsed("operator", "--controllers", "eip", "--eip-cluster-name", "new", "--eip-aws-region", "r")
        .eipSettings().clusterName()).isEqualTo("new");
  }

  /**
   * A manifest written for k8s-eip-operator sets the variables in the environment: read there, in a process of its
   * own (a bad DEFAULT_TAGS is refused only after CLUSTER_NAME and the region were found), and never from Java system
   * properties of the same names.
   */
  @Test
  void eipSettingsComeFromTheOldOperatorsEnvironmentVariablesNotFromSystemProperties() throws Exception {
    String reservedTag = "{\"eip.materialize.cloud/cluster_name\":\"x\"}";
    Subprocess fromEnv = Subprocess.ipam(java.util.Map.of("CLUSTER_NAME", "legacy", "AWS_DEFAULT_REGION",
        "us-east-2", "DEFAULT_TAGS", reservedTag), java.util.List.of(), "operator", "--controllers", "eip");
    assertThat(fromEnv.exit()).isEqualTo(2);
    assertThat(fromEnv.err()).startsWith("ipam operator: --eip-default-tags (env DEFAULT_TAGS) may not set the tag"
        + " eip.materialize.cloud/cluster_name");

    Subprocess fromProperties = Subprocess.ipam(java.util.Map.of(), java.util.List.of("-DCLUSTER_NAME=legacy",
        "-DDEFAULT_TAGS=" + reservedTag), "operator", "--controllers", "eip", "--eip-aws-region", "us-east-2");
    assertThat(fromProperties.exit()).isEqualTo(2);
    assertThat(fromProperties.err()).startsWith("ipam operator: --eip-cluster-name (env CLUSTER_NAME) is not set");
  }

  /** {@code ipam} in a JVM of its own, with exactly the environment variables given (plus PATH). */
  private record Subprocess(int exit, String err) {
    static Subprocess ipam(java.util.Map<String, String> env, java.util.List<String> jvmArgs, String... args)
        throws Exception {
      java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of(
          Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
          System.getProperty("java.class.path")));
      command.addAll(jvmArgs);
      command.add(IpamCommand.class.getName());
      command.addAll(java.util.List.of(args));
      ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD);
      pb.environment().keySet().retainAll(java.util.Set.of("PATH"));
      pb.environment().putAll(env);
      Process p = pb.start();
      String err = new String(p.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).as("ipam exits").isTrue();
      return new Subprocess(p.exitValue(), err);
    }
  }

  @Test
  void badEipSettingsAreBadInputNamingTheOptionAndTheVariable() {
    IpamRun tags = ipam("operator", "--controllers", "eip", "--eip-cluster-name", "c", "--eip-aws-region", "r",
        "--eip-default-tags", "{not json");
    assertThat(tags.exit()).isEqualTo(2);
    assertThat(tags.err()).startsWith("ipam operator: --eip-default-tags (env DEFAULT_TAGS) is not a JSON object");
    IpamRun reserved = ipam("operator", "--controllers", "eip", "--eip-cluster-name", "c", "--eip-aws-region", "r",
        "--eip-default-tags", "{\"eip.materialize.cloud/cluster_name\":\"x\"}");
    assertThat(reserved.exit()).isEqualTo(2);
    assertThat(reserved.err()).startsWith("ipam operator: --eip-default-tags (env DEFAULT_TAGS) may not set the tag"
        + " eip.materialize.cloud/cluster_name");
    if (System.getenv("CLUSTER_NAME") == null) {
      IpamRun noCluster = ipam("operator", "--controllers", "eip", "--eip-aws-region", "r");
      assertThat(noCluster.exit()).isEqualTo(2);
      assertThat(noCluster.err()).startsWith("ipam operator: --eip-cluster-name (env CLUSTER_NAME) is not set");
    }
    assertThat(ipam("operator", "--controllers", "eip", "--eip-cluster-name", "c", "--eip-aws-region", "r",
        "--eip-resync-interval", "soon").err())
        .startsWith("ipam operator: --eip-resync-interval (env EIP_RESYNC_INTERVAL) 'soon' is not a duration");
  }

  @Test
  void durations() {
    DurationConverter c = new DurationConverter();
    assertThat(c.convert("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(c.convert("15s")).isEqualTo(Duration.ofSeconds(15));
    assertThat(c.convert("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(c.convert("PT1H")).isEqualTo(Duration.ofHours(1));
    assertThatThrownBy(() -> c.convert("soon")).isInstanceOf(TypeConversionException.class);
    assertThatThrownBy(() -> c.convert("0s")).isInstanceOf(TypeConversionException.class);
  }
}
