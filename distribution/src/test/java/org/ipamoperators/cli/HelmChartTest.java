package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.ipamoperators.cli.operator.OperatorCommand;
import org.ipamoperators.cli.operator.OperatorControllers;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart, through Helm's own library: lint, the values schema, and what each setting
 * renders. (The plain manifests are rendered from this chart at build time; ManifestsTest and the
 * ManifestsITs check those objects in depth, on a real apiserver too.)
 */
class HelmChartTest {
  static final Path CHART = Path.of("target", "helm", "ipam-operators");

  @Test
  void theChartLintsCleanInStrictMode() {
    LintResult lint = new Helm(CHART).lint().strict().call();
    assertThat(lint.isFailed()).as("helm lint --strict: %s", lint.getMessages()).isFalse();
    // Not even an [INFO] (the chart has its icon).
    assertThat(lint.getMessages()).isEmpty();
  }

  @Test
  void theChartIsPackagedWithItsCrds() throws Exception {
    assertThat(CHART.resolveSibling("ipam-operators-" + version() + ".tgz")).isRegularFile();
    List<String> crds;
    try (var files = Files.list(CHART.resolve("crds"))) {
      crds = files.map(p -> p.getFileName().toString()).sorted().toList();
    }
    List<String> expected = new ArrayList<>();
    OperatorControllers.crds(OperatorControllers.names().stream()
        .map(n -> OperatorControllers.byName(n).orElseThrow()).toList())
        .forEach(crd -> expected.add(CrdFiles.fileName(crd)));
    assertThat(crds).containsExactlyInAnyOrderElementsOf(expected);
  }

  @Test
  void byDefaultOnlyEgressipRunsWithoutMonitoringObjects() {
    List<HasMetadata> all = objects(template());
    // The ClusterRoles aggregated into view and edit belong to no one controller.
    assertThat(all).filteredOn(o -> o.getMetadata().getLabels().get("app.kubernetes.io/component").equals("rbac"))
        .extracting(o -> o.getKind() + " " + o.getMetadata().getName())
        .containsExactlyInAnyOrder("ClusterRole test-view", "ClusterRole test-edit");
    List<HasMetadata> objects = all.stream()
        .filter(o -> !o.getMetadata().getLabels().get("app.kubernetes.io/component").equals("rbac")).toList();
    assertThat(objects).extracting(o -> o.getMetadata().getLabels().get("app.kubernetes.io/component"))
        .containsOnly("egressip");
    // The second Role: the AWS credentials Secret.
    assertThat(objects).extracting(HasMetadata::getKind)
        .containsExactlyInAnyOrder("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
            "Role", "RoleBinding", "Deployment", "PodDisruptionBudget", "Service");
    Deployment d = Manifests.one(objects, Deployment.class);
    assertThat(d.getMetadata().getName()).isEqualTo("test-egressip");
    assertThat(d.getMetadata().getNamespace()).isEqualTo("ops");
    assertThat(d.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
        .isEqualTo("ipam-operators/egressip:" + version());
    assertThat(Manifests.operatorArgs(d)).containsExactly("operator", "--controllers=egressip",
        "--lease-name=test-egressip-leader", "--http-port=8080");
  }

  @Test
  void eachControllerGetsItsOwnDeploymentAndIdentity() {
    List<HasMetadata> objects = objects(template().set("controllers.vip.enabled", true)
        .set("monitoring.podMonitor", true).set("monitoring.prometheusRule", true));
    assertThat(Manifests.ofType(objects, Deployment.class)).extracting(d -> d.getMetadata().getName())
        .containsExactlyInAnyOrder("test-egressip", "test-vip");
    assertThat(objects).filteredOn(o -> o.getKind().equals("PodMonitor")).hasSize(2);
    assertThat(objects).filteredOn(o -> o.getKind().equals("PrometheusRule"))
        .extracting(r -> r.getMetadata().getName()).containsExactlyInAnyOrder("egressip-utilization", "vip-pools");
    for (Deployment d : Manifests.ofType(objects, Deployment.class)) {
      String component = d.getMetadata().getLabels().get("app.kubernetes.io/component");
      assertThat(d.getSpec().getTemplate().getSpec().getServiceAccountName()).isEqualTo("test-" + component);
      assertThat(Manifests.operatorArgs(d)).contains("--controllers=" + component);
    }
  }

  @Test
  void everyControllerRunsASmallJvmOfItsOwnAndTheChartWideOneIsTheFallback() {
    List<HasMetadata> objects = objects(template().set("controllers.vip.enabled", true)
        .set("controllers.keepalived.enabled", true).set("controllers.eip.enabled", true)
        .set("controllers.eip.settings.clusterName", "c").set("controllers.eip.settings.awsRegion", "us-east-1"));
    var byName = new java.util.HashMap<String, io.fabric8.kubernetes.api.model.Container>();
    for (Deployment d : Manifests.ofType(objects, Deployment.class)) {
      byName.put(d.getMetadata().getName(), d.getSpec().getTemplate().getSpec().getContainers().get(0));
    }
    var vip = byName.get("test-vip");
    assertThat(env(vip, "JAVA_TOOL_OPTIONS")).isEqualTo("-Xms32m -Xmx256m -XX:+UseSerialGC -XX:MaxMetaspaceSize=96m"
        + " -XX:ReservedCodeCacheSize=32m -XX:TieredStopAtLevel=1 -Xss512k -XX:+ExitOnOutOfMemoryError"
        + " -Djava.util.concurrent.ForkJoinPool.common.parallelism=2");
    assertThat(env(vip, "MALLOC_ARENA_MAX")).isEqualTo("2");
    assertThat(vip.getResources().getRequests().get("memory").toString()).isEqualTo("256Mi");
    assertThat(vip.getResources().getLimits().get("memory").toString()).isEqualTo("448Mi");
    var egress = byName.get("test-egressip");
    assertThat(env(egress, "JAVA_TOOL_OPTIONS")).isEqualTo("-Xms32m -Xmx192m -XX:+UseSerialGC -XX:MaxMetaspaceSize=96m"
        + " -XX:ReservedCodeCacheSize=32m -XX:TieredStopAtLevel=1 -Xss512k -XX:+ExitOnOutOfMemoryError"
        + " -XX:MinHeapFreeRatio=20 -XX:MaxHeapFreeRatio=40 -XX:NewRatio=3 -XX:TrimNativeHeapInterval=2000"
        + " -Dsun.reflect.inflationThreshold=2147483647");
    assertThat(env(egress, "MALLOC_ARENA_MAX")).isEqualTo("2");
    assertThat(egress.getResources().getLimits().get("memory").toString()).isEqualTo("448Mi");
    // Serial GC and C1 everywhere: the JVM's default G1 and C2 took twice the CPU to start.
    assertThat(env(byName.get("test-keepalived"), "JAVA_TOOL_OPTIONS")).startsWith("-Xms32m -Xmx256m -XX:+UseSerialGC")
        .contains("-XX:TieredStopAtLevel=1");
    assertThat(env(byName.get("test-eip"), "JAVA_TOOL_OPTIONS")).startsWith("-Xms32m -Xmx384m -XX:+UseSerialGC")
        .contains("-XX:TieredStopAtLevel=1", "-XX:MaxMetaspaceSize=128m");
    assertThat(env(byName.get("test-keepalived"), "MALLOC_ARENA_MAX")).isEqualTo("2");
    assertThat(env(byName.get("test-eip"), "MALLOC_ARENA_MAX")).isEqualTo("2");
    // A controller's own setting wins over the chart-wide one, which still applies to the others.
    var custom = objects(template().set("controllers.vip.enabled", true).set("controllers.vip.javaToolOptions", "-Xmx1g")
        .set("controllers.egressip.javaToolOptions", "").set("controllers.keepalived.enabled", true)
        .set("controllers.keepalived.javaToolOptions", "")
        .set("javaToolOptions", "-Xmx2g"));
    for (Deployment d : Manifests.ofType(custom, Deployment.class)) {
      assertThat(env(d.getSpec().getTemplate().getSpec().getContainers().get(0), "JAVA_TOOL_OPTIONS"))
          .isEqualTo(d.getMetadata().getName().equals("test-vip") ? "-Xmx1g" : "-Xmx2g");
    }
  }

  private static String env(io.fabric8.kubernetes.api.model.Container c, String name) {
    return c.getEnv().stream().filter(e -> e.getName().equals(name)).map(e -> e.getValue()).findFirst().orElse(null);
  }

  @Test
  void theEgressAlertsNeedTheEgressController() {
    List<HasMetadata> objects = objects(template().set("controllers.egressip.enabled", false)
        .set("controllers.vip.enabled", true).set("monitoring.prometheusRule", true));
    assertThat(objects).filteredOn(o -> o.getKind().equals("PrometheusRule"))
        .extracting(r -> r.getMetadata().getName()).containsExactly("vip-pools");
  }

  @Test
  void settingsReachTheDeployment() {
    List<HasMetadata> objects = objects(template().set("image.repository", "mirror.example/ipam")
        .set("image.tag", "1.2.3").set("replicas", 3).set("httpPort", 9090)
        .set("controllers.egressip.extraArgs[0]", "--resync=2m")
        .set("controllers.egressip.env[0].name", "IPAM_PLATFORM")
        .set("controllers.egressip.env[0].value", "BareMetal"));
    Deployment d = Manifests.one(objects, Deployment.class);
    var container = d.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(container.getImage()).isEqualTo("mirror.example/ipam/egressip:1.2.3");
    assertThat(d.getSpec().getReplicas()).isEqualTo(3);
    assertThat(Manifests.operatorArgs(d)).contains("--http-port=9090", "--resync=2m");
    assertThat(container.getPorts()).singleElement().satisfies(p -> assertThat(p.getContainerPort()).isEqualTo(9090));
    assertThat(container.getEnv()).anySatisfy(e -> {
      assertThat(e.getName()).isEqualTo("IPAM_PLATFORM");
      assertThat(e.getValue()).isEqualTo("BareMetal");
    });
  }

  @Test
  void theKeepalivedTrustBoundaryReachesTheOperatorsArguments() {
    List<HasMetadata> plain = objects(template().set("controllers.egressip.enabled", false)
        .set("controllers.keepalived.enabled", true));
    assertThat(Manifests.operatorArgs(Manifests.one(plain, Deployment.class)))
        .noneMatch(a -> a.startsWith("--keepalived-"));
    List<HasMetadata> objects = objects(template().set("controllers.egressip.enabled", false)
        .set("controllers.keepalived.enabled", true)
        .set("controllers.keepalived.trust.allowedImages[0]", "mirror.example/keepalived:*")
        .set("controllers.keepalived.trust.allowedImages[1]", "x/y:1")
        .set("controllers.keepalived.trust.allowedNamespaces[0]", "network")
        .set("controllers.keepalived.trust.watchNamespaces[0]", "network")
        .set("controllers.keepalived.trust.routerIdsPerNamespace", 32)
        .set("controllers.keepalived.trust.allowGroupPrograms", true)
        .set("controllers.keepalived.trust.metricsPorts", "19650-19700"));
    List<String> args = Manifests.operatorArgs(Manifests.one(objects, Deployment.class));
    assertThat(args).contains("--keepalived-allowed-images=mirror.example/keepalived:*,x/y:1",
        "--keepalived-allowed-namespaces=network", "--keepalived-namespaces=network",
        "--keepalived-router-ids-per-namespace=32", "--keepalived-allow-group-programs",
        "--keepalived-metrics-ports=19650-19700");
    // and the command accepts them
    OperatorCommand cmd = new OperatorCommand();
    new picocli.CommandLine(cmd).parseArgs(args.subList(1, args.size()).toArray(String[]::new));
    var settings = cmd.keepalivedSettings();
    assertThat(settings.routerIdsPerNamespace()).isEqualTo(32);
    assertThat(settings.metricsPorts().min()).isEqualTo(19650);
    assertThat(settings.imageAllowed("mirror.example/keepalived:2.2")).isTrue();
    assertThat(settings.watchNamespaces()).containsExactly("network");
    assertThatThrownBy(() -> template().set("controllers.keepalived.trust.routerIdsPerNamespace", 300).call())
        .hasMessageContaining("routerIdsPerNamespace");
  }

  @Test
  void theEipSettingsReachTheOperatorsArgumentsAndTheOldVariablesStillWork() {
    List<HasMetadata> plain = objects(template().set("controllers.egressip.enabled", false)
        .set("controllers.eip.enabled", true)
        .set("controllers.eip.env[0].name", "CLUSTER_NAME").set("controllers.eip.env[0].value", "legacy"));
    Deployment old = Manifests.one(plain, Deployment.class);
    assertThat(Manifests.operatorArgs(old)).noneMatch(a -> a.startsWith("--eip-"));
    assertThat(old.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv())
        .anyMatch(e -> e.getName().equals("CLUSTER_NAME") && e.getValue().equals("legacy"));

    List<HasMetadata> objects = objects(template().set("controllers.egressip.enabled", false)
        .set("controllers.eip.enabled", true)
        .set("controllers.eip.settings.clusterName", "prod")
        .set("controllers.eip.settings.awsRegion", "eu-west-1")
        .set("controllers.eip.settings.namespace", "web")
        .set("controllers.eip.settings.defaultTags.Stack", "mz cloud")
        .set("controllers.eip.settings.resyncInterval", "1m")
        .set("controllers.eip.settings.failoverGrace", "20s")
        .set("controllers.eip.settings.nodeModeNamespaces[0]", "egress-gw")
        .set("controllers.eip.settings.nodeModeNamespaces[1]", "edge")
        .set("controllers.eip.settings.nodeModeNodeSelector", "tier in (edge,gw)"));
    List<String> args = Manifests.operatorArgs(Manifests.one(objects, Deployment.class));
    assertThat(args).contains("--eip-cluster-name=prod", "--eip-aws-region=eu-west-1", "--eip-namespace=web",
        "--eip-default-tags={\"Stack\":\"mz cloud\"}", "--eip-resync-interval=1m", "--eip-failover-grace=20s",
        "--eip-node-mode-namespaces=egress-gw,edge", "--eip-node-mode-node-selector=tier in (edge,gw)");
    // and the command accepts them
    OperatorCommand cmd = new OperatorCommand();
    new picocli.CommandLine(cmd).parseArgs(args.subList(1, args.size()).toArray(String[]::new));
    var settings = cmd.eipSettings();
    assertThat(settings.clusterName()).isEqualTo("prod");
    assertThat(settings.defaultTags()).containsExactlyEntriesOf(java.util.Map.of("Stack", "mz cloud"));
    assertThat(settings.resyncInterval()).isEqualTo(java.time.Duration.ofMinutes(1));
    assertThat(settings.nodeMode().namespaces()).containsExactlyInAnyOrder("egress-gw", "edge");
    assertThat(settings.nodeMode().nodes().admits(java.util.Map.of("tier", "gw"))).isTrue();
    assertThat(settings.nodeMode().nodes().admits(java.util.Map.of("tier", "web"))).isFalse();
    assertThatThrownBy(() -> template().set("controllers.eip.enabled", true)
        .set("controllers.eip.settings.resyncInterval", "soon").call()).hasMessageContaining("resyncInterval");
  }

  @Test
  void everyPodMeetsTheRestrictedPodSecurityLevelWithNoFixedUserOrGroup() {
    List<Deployment> deployments = Manifests.ofType(objects(allControllers()), Deployment.class);
    assertThat(deployments).hasSize(4);
    for (Deployment d : deployments) {
      PodSpec pod = d.getSpec().getTemplate().getSpec();
      PodSecurityContext security = pod.getSecurityContext();
      // The UID is the image's (non-root 65532) or the platform's (OpenShift restricted-v2 assigns one).
      assertThat(security.getRunAsUser()).as(d.getMetadata().getName()).isNull();
      assertThat(security.getRunAsGroup()).isNull();
      assertThat(security.getFsGroup()).isNull();
      assertThat(security.getRunAsNonRoot()).isTrue();
      assertThat(security.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
      assertRestrictedContainers(pod);
    }
  }

  @Test
  void podSecurityContextIsMergedOverTheRestrictedDefaults() {
    List<Deployment> deployments = Manifests.ofType(objects(allControllers()
        .set("podSecurityContext.runAsUser", 1000680000).set("podSecurityContext.runAsGroup", 1000680000)
        .set("podSecurityContext.fsGroup", 1000680000)), Deployment.class);
    assertThat(deployments).hasSize(4);
    for (Deployment d : deployments) {
      PodSecurityContext security = d.getSpec().getTemplate().getSpec().getSecurityContext();
      assertThat(security.getRunAsUser()).as(d.getMetadata().getName()).isEqualTo(1000680000L);
      assertThat(security.getRunAsGroup()).isEqualTo(1000680000L);
      assertThat(security.getFsGroup()).isEqualTo(1000680000L);
      assertThat(security.getRunAsNonRoot()).isTrue();
      assertThat(security.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
      assertRestrictedContainers(d.getSpec().getTemplate().getSpec());
    }
    // A platform's own profile replaces the default one.
    PodSecurityContext localhost = Manifests.one(objects(template()
            .set("podSecurityContext.seccompProfile.type", "Localhost")
            .set("podSecurityContext.seccompProfile.localhostProfile", "profiles/ipam.json")), Deployment.class)
        .getSpec().getTemplate().getSpec().getSecurityContext();
    assertThat(localhost.getSeccompProfile().getType()).isEqualTo("Localhost");
    assertThat(localhost.getSeccompProfile().getLocalhostProfile()).isEqualTo("profiles/ipam.json");
    assertThat(localhost.getRunAsNonRoot()).isTrue();
    assertThatThrownBy(() -> template().set("podSecurityContext", "root").call())
        .hasMessageContaining("podSecurityContext");
  }

  /**
   * What Pod Security Admission's {@code restricted} level (and OpenShift's restricted-v2 SCC) asks of every
   * container and the pod: no privilege escalation, every capability dropped, no host namespaces, ports or paths;
   * and, with a read-only root filesystem, a writable /tmp for the JVM whatever the UID.
   */
  private static void assertRestrictedContainers(PodSpec pod) {
    assertThat(pod.getHostNetwork()).isNotEqualTo(Boolean.TRUE);
    assertThat(pod.getHostPID()).isNotEqualTo(Boolean.TRUE);
    assertThat(pod.getHostIPC()).isNotEqualTo(Boolean.TRUE);
    assertThat(pod.getVolumes()).allSatisfy(v -> assertThat(v.getHostPath()).isNull());
    List<Container> containers = new ArrayList<>(pod.getContainers());
    containers.addAll(pod.getInitContainers());
    assertThat(containers).isNotEmpty().allSatisfy(c -> {
      var security = c.getSecurityContext();
      assertThat(security.getAllowPrivilegeEscalation()).isFalse();
      assertThat(security.getPrivileged()).isNotEqualTo(Boolean.TRUE);
      assertThat(security.getCapabilities().getDrop()).containsExactly("ALL");
      assertThat(security.getCapabilities().getAdd()).isNullOrEmpty();
      assertThat(security.getRunAsUser()).isNull();
      assertThat(security.getReadOnlyRootFilesystem()).isTrue();
      assertThat(c.getPorts()).allSatisfy(p -> assertThat(p.getHostPort()).isNull());
      String tmp = c.getVolumeMounts().stream().filter(m -> m.getMountPath().equals("/tmp")).findFirst()
          .orElseThrow().getName();
      assertThat(pod.getVolumes()).filteredOn(v -> v.getName().equals(tmp))
          .singleElement().satisfies(v -> assertThat(v.getEmptyDir()).isNotNull());
    });
  }

  static TemplateCommand allControllers() {
    return template().set("controllers.vip.enabled", true).set("controllers.keepalived.enabled", true)
        .set("controllers.eip.enabled", true);
  }

  @Test
  void withoutLeaderElectionThereIsNoLeaseRole() {
    List<HasMetadata> objects = objects(template().set("leaderElection.enabled", false).set("replicas", 1));
    assertThat(Manifests.ofType(objects, Role.class)).noneMatch(r -> r.getMetadata().getName().endsWith("-leader-election"))
        .noneMatch(r -> r.getRules().stream().anyMatch(rule -> rule.getResources().contains("leases")));
    assertThat(Manifests.operatorArgs(Manifests.one(objects, Deployment.class))).contains("--no-leader-election")
        .noneMatch(a -> a.startsWith("--lease-name"));
  }

  @Test
  void badValuesAreRefusedWithTheReason() {
    assertThatThrownBy(() -> template().set("controllers.egressip.enabled", false).call())
        .hasMessageContaining("no controller is enabled");
    assertThatThrownBy(() -> template().set("controllers.keepalive.enabled", true).call())
        .hasMessageContaining("keepalive");
    assertThatThrownBy(() -> template().set("replicas", 0).call()).hasMessageContaining("replicas");
    assertThatThrownBy(() -> template().set("controllers.egressip.extraArgs[0]", "resync").call())
        .hasMessageContaining("extraArgs");
  }

  @Test
  void keepalivedReadsSecretsClusterWideUnlessTheChartNamesTheAllowedNamespaces() {
    List<HasMetadata> open = objects(template().set("controllers.keepalived.enabled", true));
    assertThat(secretRules(Manifests.ofType(open, io.fabric8.kubernetes.api.model.rbac.ClusterRole.class).stream()
        .filter(r -> r.getMetadata().getName().equals("test-keepalived")).findFirst().orElseThrow().getRules()))
        .as("the ClusterRole's Secret rule").singleElement()
        .satisfies(r -> assertThat(r.getVerbs()).containsExactly("get"));
    assertThat(Manifests.ofType(open, Role.class)).noneMatch(r -> !secretRules(r.getRules()).isEmpty()
        && r.getMetadata().getName().equals("test-keepalived"));

    List<HasMetadata> strict = objects(template().set("controllers.keepalived.enabled", true)
        .set("controllers.keepalived.trust.allowedNamespaces[0]", "team-a")
        .set("controllers.keepalived.trust.allowedNamespaces[1]", "team-b"));
    assertThat(secretRules(Manifests.ofType(strict, io.fabric8.kubernetes.api.model.rbac.ClusterRole.class).stream()
        .filter(r -> r.getMetadata().getName().equals("test-keepalived")).findFirst().orElseThrow().getRules()))
        .as("no Secret rule cluster-wide").isEmpty();
    // (egressip's Role for its AWS credentials Secret, in the release's namespace, is not keepalived's.)
    List<Role> secretRoles = Manifests.ofType(strict, Role.class).stream()
        .filter(r -> r.getMetadata().getName().equals("test-keepalived") && !secretRules(r.getRules()).isEmpty())
        .toList();
    assertThat(secretRoles).extracting(r -> r.getMetadata().getNamespace())
        .containsExactlyInAnyOrder("team-a", "team-b");
    assertThat(secretRoles).allSatisfy(r -> assertThat(r.getRules()).singleElement().satisfies(rule -> {
      assertThat(rule.getResources()).containsExactly("secrets");
      assertThat(rule.getVerbs()).containsExactly("get");
    }));
    assertThat(Manifests.ofType(strict, io.fabric8.kubernetes.api.model.rbac.RoleBinding.class))
        .filteredOn(b -> b.getRoleRef().getName().equals("test-keepalived"))
        .extracting(b -> b.getMetadata().getNamespace() + " " + b.getSubjects().get(0).getNamespace() + "/"
            + b.getSubjects().get(0).getName())
        .containsExactlyInAnyOrder("team-a ops/test-keepalived", "team-b ops/test-keepalived");
  }

  private static List<io.fabric8.kubernetes.api.model.rbac.PolicyRule> secretRules(
      List<io.fabric8.kubernetes.api.model.rbac.PolicyRule> rules) {
    return rules.stream().filter(r -> r.getResources().contains("secrets")).toList();
  }

  static TemplateCommand template() {
    return new Helm(CHART).template().withName("test").withNamespace("ops")
        .withKubeVersion(ChartManifests.MIN_KUBE_VERSION).skipCrds();
  }

  static List<HasMetadata> objects(TemplateCommand template) {
    return ChartManifests.objects(template.call());
  }

  static String version() {
    try {
      return ChartManifests.chartVersion(CHART);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
