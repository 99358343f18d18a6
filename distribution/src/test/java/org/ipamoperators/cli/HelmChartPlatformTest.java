package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.ipamoperators.cli.HelmChartTest.allControllers;
import static org.ipamoperators.cli.HelmChartTest.objects;
import static org.ipamoperators.cli.HelmChartTest.template;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.ipamoperators.cli.operator.OperatorControllers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a platform team asks of the chart, on the objects {@code helm template} renders: a disruption budget per
 * Deployment, the standard labels with selectors that never change, scheduling from values per controller, an
 * optional ServiceMonitor, and ClusterRoles aggregated into view, edit and admin for every CRD the chart ships.
 */
class HelmChartPlatformTest {
  private static final Set<String> SELECTOR_KEYS = Set.of("app.kubernetes.io/name", "app.kubernetes.io/instance",
      "app.kubernetes.io/component");
  /** The ledger, written by the controllers only (the issue that asked for the roles names them). */
  private static final Set<String> LEDGER_KINDS = Set.of("IPClaim", "IPBlock", "IDClaim");

  @Test
  void eachDeploymentOfTwoReplicasHasADisruptionBudgetOfOneAtATime() {
    List<HasMetadata> objects = objects(allControllers());
    List<Deployment> deployments = Manifests.ofType(objects, Deployment.class);
    List<PodDisruptionBudget> budgets = Manifests.ofType(objects, PodDisruptionBudget.class);
    assertThat(deployments).hasSize(4);
    assertThat(budgets).hasSameSizeAs(deployments);
    for (Deployment d : deployments) {
      assertThat(d.getSpec().getReplicas()).isEqualTo(2);
      PodDisruptionBudget pdb = budgets.stream().filter(b -> b.getMetadata().getName().equals(d.getMetadata().getName()))
          .findFirst().orElseThrow(() -> new AssertionError("no PodDisruptionBudget for " + d.getMetadata().getName()));
      assertThat(pdb.getMetadata().getNamespace()).isEqualTo("ops");
      assertThat(pdb.getSpec().getSelector().getMatchLabels()).isEqualTo(d.getSpec().getSelector().getMatchLabels());
      assertThat(pdb.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
      assertThat(pdb.getSpec().getMinAvailable()).isNull();
      assertThat(pdb.getSpec().getUnhealthyPodEvictionPolicy()).isEqualTo("AlwaysAllow");
    }
  }

  @Test
  void oneReplicaHasNoDisruptionBudgetUnlessForcedAndTheBudgetIsConfigurable() {
    assertThat(Manifests.ofType(objects(allControllers().set("replicas", 1)), PodDisruptionBudget.class)).isEmpty();
    assertThat(Manifests.ofType(objects(template().set("podDisruptionBudget.enabled", false)),
        PodDisruptionBudget.class)).isEmpty();
    PodDisruptionBudget forced = Manifests.one(objects(template().set("replicas", 1)
        .set("podDisruptionBudget.force", true)), PodDisruptionBudget.class);
    assertThat(forced.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
    PodDisruptionBudget min = Manifests.one(objects(template().set("replicas", 3)
        .set("podDisruptionBudget.minAvailable", "50%")), PodDisruptionBudget.class);
    assertThat(min.getSpec().getMinAvailable().getStrVal()).isEqualTo("50%");
    assertThat(min.getSpec().getMaxUnavailable()).isNull();
    PodDisruptionBudget max = Manifests.one(objects(template().set("replicas", 3)
        .set("podDisruptionBudget.maxUnavailable", 2)), PodDisruptionBudget.class);
    assertThat(max.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(2);
    assertThatThrownBy(() -> template().set("podDisruptionBudget.minAvailable", "half").call())
        .hasMessageContaining("minAvailable");
  }

  @Test
  void everyObjectCarriesTheStandardLabelsAndNoSelectorNamesAVersion() {
    String version = HelmChartTest.version();
    List<HasMetadata> objects = objects(allControllers().set("monitoring.podMonitor", true)
        .set("monitoring.serviceMonitor", true).set("monitoring.prometheusRule", true));
    assertThat(objects).extracting(HasMetadata::getKind).contains("Deployment", "PodDisruptionBudget", "Service",
        "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "PodMonitor", "ServiceMonitor",
        "PrometheusRule");
    for (HasMetadata o : objects) {
      assertThat(o.getMetadata().getLabels()).as("%s %s", o.getKind(), o.getMetadata().getName())
          .containsEntry("helm.sh/chart", "ipam-operators-" + version)
          .containsEntry("app.kubernetes.io/managed-by", "Helm")
          .containsEntry("app.kubernetes.io/instance", "test")
          .containsEntry("app.kubernetes.io/version", version)
          .containsEntry("app.kubernetes.io/part-of", "ipam-operators")
          .containsEntry("app.kubernetes.io/name", "ipam-operators")
          .containsKey("app.kubernetes.io/component");
    }
    // Every selector is exactly name, instance and component: a chart upgrade never changes one (a Deployment's
    // selector is immutable), and each selects its own controller's pods.
    for (HasMetadata o : objects) {
      Map<String, String> selector = selector(o);
      if (selector != null) {
        assertThat(selector.keySet()).as("selector of %s %s", o.getKind(), o.getMetadata().getName())
            .isEqualTo(SELECTOR_KEYS);
        assertThat(selector).containsEntry("app.kubernetes.io/instance", "test")
            .containsEntry("app.kubernetes.io/component", o.getMetadata().getLabels().get("app.kubernetes.io/component"));
      }
    }
    assertThat(objects).filteredOn(o -> selector(o) != null).extracting(HasMetadata::getKind)
        .contains("Deployment", "PodDisruptionBudget", "Service", "PodMonitor", "ServiceMonitor");
    for (Deployment d : Manifests.ofType(objects, Deployment.class)) {
      assertThat(d.getSpec().getTemplate().getMetadata().getLabels())
          .containsAllEntriesOf(d.getMetadata().getLabels());
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> selector(HasMetadata o) {
    if (o instanceof Deployment d) {
      return d.getSpec().getSelector().getMatchLabels();
    }
    if (o instanceof PodDisruptionBudget p) {
      return p.getSpec().getSelector().getMatchLabels();
    }
    if (o instanceof Service s) {
      return s.getSpec().getSelector();
    }
    if (o instanceof GenericKubernetesResource g && List.of("PodMonitor", "ServiceMonitor").contains(g.getKind())) {
      return (Map<String, String>) g.get("spec", "selector", "matchLabels");
    }
    return null;
  }

  @Test
  void podLabelsAndAnnotationsReachThePodsAndNeverReplaceTheChartsLabels(@TempDir Path dir) throws IOException {
    Path values = dir.resolve("values.yaml");
    Files.writeString(values, """
        podLabels: {team: network, tier: chart}
        podAnnotations: {owner: platform, scope: chart}
        controllers:
          vip:
            enabled: true
            podLabels: {tier: vip, app.kubernetes.io/component: other, app.kubernetes.io/instance: other}
            podAnnotations: {scope: vip}
        """);
    Map<String, Deployment> byName = deployments(objects(template().withValuesFile(values)));
    Deployment egress = byName.get("test-egressip");
    Deployment vip = byName.get("test-vip");
    assertThat(egress.getSpec().getTemplate().getMetadata().getLabels()).containsEntry("team", "network")
        .containsEntry("tier", "chart").containsAllEntriesOf(egress.getSpec().getSelector().getMatchLabels());
    assertThat(egress.getSpec().getTemplate().getMetadata().getAnnotations())
        .containsExactlyInAnyOrderEntriesOf(Map.of("owner", "platform", "scope", "chart"));
    assertThat(vip.getSpec().getTemplate().getMetadata().getLabels()).containsEntry("team", "network")
        .containsEntry("tier", "vip").containsEntry("app.kubernetes.io/component", "vip")
        .containsEntry("app.kubernetes.io/instance", "test")
        .containsAllEntriesOf(vip.getSpec().getSelector().getMatchLabels());
    assertThat(vip.getSpec().getTemplate().getMetadata().getAnnotations())
        .containsExactlyInAnyOrderEntriesOf(Map.of("owner", "platform", "scope", "vip"));
  }

  @Test
  void schedulingValuesReachThePodsOfTheRightDeployment(@TempDir Path dir) throws IOException {
    Path values = dir.resolve("values.yaml");
    Files.writeString(values, """
        nodeSelector: {node-role.kubernetes.io/infra: ""}
        tolerations: [{key: node-role.kubernetes.io/infra, operator: Exists, effect: NoSchedule}]
        priorityClassName: system-cluster-critical
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms: [{matchExpressions: [{key: zone-class, operator: In, values: [a]}]}]
        topologySpreadConstraints:
          - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
        controllers:
          vip:
            enabled: true
            nodeSelector: {pool: lb}
            tolerations: []
            priorityClassName: lb-critical
            affinity:
              podAffinity:
                preferredDuringSchedulingIgnoredDuringExecution:
                  - weight: 10
                    podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: lb}}}
            topologySpreadConstraints:
              - {maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
                 labelSelector: {matchLabels: {app: lb}}}
          keepalived:
            enabled: true
        """);
    Map<String, Deployment> byName = deployments(objects(template().withValuesFile(values)));
    assertThat(byName).containsOnlyKeys("test-egressip", "test-vip", "test-keepalived");
    for (String name : List.of("test-egressip", "test-keepalived")) {
      Deployment d = byName.get(name);
      PodSpec pod = d.getSpec().getTemplate().getSpec();
      // Helm merges a values file's map over the chart's: the default kubernetes.io/os stays.
      assertThat(pod.getNodeSelector()).as(name).containsExactlyInAnyOrderEntriesOf(
          Map.of("node-role.kubernetes.io/infra", "", "kubernetes.io/os", "linux"));
      assertThat(pod.getTolerations()).singleElement().satisfies(t -> {
        assertThat(t.getKey()).isEqualTo("node-role.kubernetes.io/infra");
        assertThat(t.getOperator()).isEqualTo("Exists");
        assertThat(t.getEffect()).isEqualTo("NoSchedule");
      });
      assertThat(pod.getPriorityClassName()).isEqualTo("system-cluster-critical");
      // The affinity given replaces the default anti-affinity.
      assertThat(pod.getAffinity().getPodAntiAffinity()).isNull();
      assertThat(pod.getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution()
          .getNodeSelectorTerms().get(0).getMatchExpressions().get(0).getKey()).isEqualTo("zone-class");
      // A constraint without a labelSelector selects this controller's own pods.
      assertThat(pod.getTopologySpreadConstraints()).singleElement().satisfies(c -> {
        assertThat(c.getTopologyKey()).isEqualTo("topology.kubernetes.io/zone");
        assertThat(c.getMaxSkew()).isEqualTo(1);
        assertThat(c.getWhenUnsatisfiable()).isEqualTo("ScheduleAnyway");
        assertThat(c.getLabelSelector().getMatchLabels()).isEqualTo(d.getSpec().getSelector().getMatchLabels());
      });
    }
    PodSpec vip = byName.get("test-vip").getSpec().getTemplate().getSpec();
    // A controller's own nodeSelector replaces the chart-wide one.
    assertThat(vip.getNodeSelector()).containsExactlyEntriesOf(Map.of("pool", "lb"));
    assertThat(vip.getTolerations()).isNullOrEmpty();
    assertThat(vip.getPriorityClassName()).isEqualTo("lb-critical");
    assertThat(vip.getAffinity().getNodeAffinity()).isNull();
    assertThat(vip.getAffinity().getPodAffinity().getPreferredDuringSchedulingIgnoredDuringExecution())
        .singleElement().satisfies(t -> assertThat(t.getWeight()).isEqualTo(10));
    assertThat(vip.getTopologySpreadConstraints()).singleElement().satisfies(c -> {
      assertThat(c.getMaxSkew()).isEqualTo(2);
      assertThat(c.getWhenUnsatisfiable()).isEqualTo("DoNotSchedule");
      assertThat(c.getLabelSelector().getMatchLabels()).containsExactlyEntriesOf(Map.of("app", "lb"));
    });
    assertThatThrownBy(() -> template().set("controllers.vip.affinity.nodeAfinity.x", "y").call())
        .hasMessageContaining("nodeAfinity");
  }

  @Test
  void byDefaultTheReplicasPreferDifferentNodesAndThePresetChoosesHowHard() {
    for (Deployment d : Manifests.ofType(objects(allControllers()), Deployment.class)) {
      PodSpec pod = d.getSpec().getTemplate().getSpec();
      assertThat(pod.getNodeSelector()).containsExactlyEntriesOf(Map.of("kubernetes.io/os", "linux"));
      assertThat(pod.getTolerations()).isNullOrEmpty();
      assertThat(pod.getPriorityClassName()).isNull();
      assertThat(pod.getTopologySpreadConstraints()).isNullOrEmpty();
      var anti = pod.getAffinity().getPodAntiAffinity();
      assertThat(anti.getRequiredDuringSchedulingIgnoredDuringExecution()).isNullOrEmpty();
      assertThat(anti.getPreferredDuringSchedulingIgnoredDuringExecution()).singleElement().satisfies(w -> {
        assertThat(w.getPodAffinityTerm().getTopologyKey()).isEqualTo("kubernetes.io/hostname");
        assertThat(w.getPodAffinityTerm().getLabelSelector().getMatchLabels())
            .isEqualTo(d.getSpec().getSelector().getMatchLabels());
      });
    }
    Deployment hard = Manifests.one(objects(template().set("podAntiAffinity", "hard")), Deployment.class);
    var required = hard.getSpec().getTemplate().getSpec().getAffinity().getPodAntiAffinity()
        .getRequiredDuringSchedulingIgnoredDuringExecution();
    assertThat(required).singleElement().satisfies(t -> {
      assertThat(t.getTopologyKey()).isEqualTo("kubernetes.io/hostname");
      assertThat(t.getLabelSelector().getMatchLabels()).isEqualTo(hard.getSpec().getSelector().getMatchLabels());
    });
    Deployment none = Manifests.one(objects(template().set("podAntiAffinity", "none")), Deployment.class);
    assertThat(none.getSpec().getTemplate().getSpec().getAffinity()).isNull();
    assertThatThrownBy(() -> template().set("podAntiAffinity", "strict").call()).hasMessageContaining("podAntiAffinity");
  }

  @Test
  void theServiceMonitorIsOffByDefaultAndScrapesEachControllersMetricsServiceWhenOn() {
    assertThat(objects(allControllers().set("monitoring.podMonitor", true)))
        .noneMatch(o -> o.getKind().equals("ServiceMonitor"));
    List<HasMetadata> objects = objects(allControllers().set("monitoring.serviceMonitor", true)
        .set("monitoring.scrapeInterval", "15s"));
    List<GenericKubernetesResource> monitors = objects.stream().filter(o -> o.getKind().equals("ServiceMonitor"))
        .map(GenericKubernetesResource.class::cast).toList();
    List<Service> services = Manifests.ofType(objects, Service.class);
    assertThat(monitors).hasSize(4).hasSameSizeAs(services);
    for (GenericKubernetesResource m : monitors) {
      assertThat(m.getApiVersion()).isEqualTo("monitoring.coreos.com/v1");
      assertThat(m.getMetadata().getNamespace()).isEqualTo("ops");
      Map<String, String> selector = m.get("spec", "selector", "matchLabels");
      // It selects exactly one Service: its own controller's metrics Service, by the port's name.
      List<Service> selected = services.stream()
          .filter(s -> s.getMetadata().getLabels().entrySet().containsAll(selector.entrySet())).toList();
      assertThat(selected).as(m.getMetadata().getName()).singleElement().satisfies(s -> assertThat(
          s.getMetadata().getLabels().get("app.kubernetes.io/component"))
          .isEqualTo(m.getMetadata().getLabels().get("app.kubernetes.io/component")));
      List<String> namespaces = m.get("spec", "namespaceSelector", "matchNames");
      assertThat(namespaces).containsExactly("ops");
      List<Map<String, Object>> endpoints = m.get("spec", "endpoints");
      String port = selected.get(0).getSpec().getPorts().get(0).getName();
      assertThat(endpoints).singleElement().satisfies(e -> assertThat(e)
          .containsExactlyInAnyOrderEntriesOf(Map.of("port", port, "path", "/metrics", "interval", "15s",
              "honorLabels", true)));
    }
  }

  @Test
  void theAggregatedRolesCoverEveryCrdOfTheChartAndTheLedgerOnlyInView() throws IOException {
    Map<String, Set<String>> crds = new TreeMap<>();
    Map<String, Set<String>> editable = new TreeMap<>();
    Set<String> kinds = new TreeSet<>();
    for (CustomResourceDefinition crd : chartCrds()) {
      String group = crd.getSpec().getGroup();
      crds.computeIfAbsent(group, g -> new TreeSet<>()).add(crd.getSpec().getNames().getPlural());
      kinds.add(crd.getSpec().getNames().getKind());
      if (!LEDGER_KINDS.contains(crd.getSpec().getNames().getKind())) {
        editable.computeIfAbsent(group, g -> new TreeSet<>()).add(crd.getSpec().getNames().getPlural());
      }
    }
    assertThat(kinds).containsAll(LEDGER_KINDS).hasSizeGreaterThan(LEDGER_KINDS.size());
    // The same roles whichever controllers run: the chart installs every CRD.
    for (var template : List.of(template(), allControllers())) {
      List<ClusterRole> roles = Manifests.ofType(objects(template), ClusterRole.class);
      ClusterRole view = role(roles, "test-view");
      assertThat(view.getMetadata().getLabels()).containsEntry("rbac.authorization.k8s.io/aggregate-to-view", "true")
          .doesNotContainKeys("rbac.authorization.k8s.io/aggregate-to-edit", "rbac.authorization.k8s.io/aggregate-to-admin");
      assertThat(grants(view)).isEqualTo(crds);
      assertThat(view.getRules()).allSatisfy(r -> assertThat(r.getVerbs()).containsExactlyInAnyOrder("get", "list", "watch"));

      ClusterRole edit = role(roles, "test-edit");
      assertThat(edit.getMetadata().getLabels()).containsEntry("rbac.authorization.k8s.io/aggregate-to-edit", "true")
          .containsEntry("rbac.authorization.k8s.io/aggregate-to-admin", "true")
          .doesNotContainKey("rbac.authorization.k8s.io/aggregate-to-view");
      assertThat(grants(edit)).isEqualTo(editable);
      assertThat(edit.getRules()).allSatisfy(r -> {
        assertThat(r.getVerbs()).contains("create", "update", "patch", "delete").doesNotContain("*");
        assertThat(r.getResources()).noneMatch(res -> res.contains("/"));
        assertThat(r.getResourceNames()).isNullOrEmpty();
      });
    }
    assertThat(Manifests.ofType(objects(template().set("rbac.aggregatedRoles", false)), ClusterRole.class))
        .extracting(r -> r.getMetadata().getName()).containsExactly("test-egressip");
  }

  @Test
  void thePlainManifestsHoldTheAggregatedRolesOnceBesideTheControllers() {
    Object parsed = new KubernetesSerialization()
        .unmarshal(readString(Manifests.ROOT.resolve(ChartManifests.AGGREGATED_ROLES)));
    assertThat(parsed).isInstanceOf(List.class);
    List<HasMetadata> shipped = ((List<?>) parsed).stream().map(HasMetadata.class::cast).toList();
    assertThat(shipped).extracting(o -> o.getKind() + " " + o.getMetadata().getName())
        .containsExactlyInAnyOrder("ClusterRole ipam-view", "ClusterRole ipam-edit");
    for (String controller : OperatorControllers.names()) {
      assertThat(Manifests.ofType(Manifests.objects(controller), ClusterRole.class)).as(controller)
          .extracting(r -> r.getMetadata().getName()).containsExactly("ipam-" + controller);
    }
  }

  private static List<CustomResourceDefinition> chartCrds() throws IOException {
    KubernetesSerialization serialization = new KubernetesSerialization();
    try (Stream<Path> files = Files.list(HelmChartTest.CHART.resolve("crds"))) {
      List<CustomResourceDefinition> out = files.sorted()
          .map(f -> serialization.unmarshal(readString(f), CustomResourceDefinition.class)).toList();
      assertThat(out).isNotEmpty();
      return out;
    }
  }

  private static ClusterRole role(List<ClusterRole> roles, String name) {
    return roles.stream().filter(r -> r.getMetadata().getName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError("no ClusterRole " + name));
  }

  /** Group to resources, each granted once. */
  private static Map<String, Set<String>> grants(ClusterRole role) {
    Map<String, Set<String>> out = new TreeMap<>();
    for (PolicyRule r : role.getRules()) {
      for (String g : r.getApiGroups()) {
        for (String res : r.getResources()) {
          assertThat(out.computeIfAbsent(g, k -> new TreeSet<>()).add(res)).as("%s/%s granted twice", g, res).isTrue();
        }
      }
    }
    return out;
  }

  private static Map<String, Deployment> deployments(List<HasMetadata> objects) {
    Map<String, Deployment> out = new HashMap<>();
    Manifests.ofType(objects, Deployment.class).forEach(d -> out.put(d.getMetadata().getName(), d));
    return out;
  }

  private static String readString(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
