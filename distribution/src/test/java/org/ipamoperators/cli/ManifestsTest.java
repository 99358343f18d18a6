package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.ipamoperators.cli.operator.OperatorControllers.RequiredCrd;
import org.ipamoperators.cli.operator.OperatorControllers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every controller's manifests as shipped: well-formed, least privilege, probes as documented; the
 * egressip alerts as the old operator named them.
 */
class ManifestsTest {
  private static final List<String> READ_WRITE = List.of("get", "list", "patch", "update", "watch");
  private static final List<String> READ = List.of("get", "list", "watch");

  /** Exactly what each controller's ClusterRole grants: a change to RBAC is a change to this test. */
  private static final Map<String, Map<String, List<String>>> GRANTS = Map.of(
      "egressip", Map.ofEntries(
          Map.entry("/namespaces", List.of("get", "list", "patch", "watch")),
          Map.entry("/nodes", List.of("get", "list", "patch", "watch")),
          Map.entry("/events", List.of("create", "get", "update")),
          Map.entry("ipam.ipamoperators.org/ipclaims", List.of("delete", "get", "list", "watch")),
          Map.entry("ipam.ipamoperators.org/ipblocks", List.of("create", "delete", "get", "list", "update", "watch")),
          Map.entry("redhatcop.redhat.io/egressipams", List.of("get", "list", "patch", "watch")),
          Map.entry("redhatcop.redhat.io/egressipams/status", List.of("patch")),
          Map.entry("redhatcop.redhat.io/egressipams/finalizers", List.of("update")),
          Map.entry("network.openshift.io/hostsubnets", List.of("get", "list", "patch", "watch")),
          Map.entry("network.openshift.io/netnamespaces", List.of("get", "list", "patch", "watch")),
          Map.entry("k8s.ovn.org/egressips", List.of("create", "delete", "get", "list", "update", "watch")),
          Map.entry("config.openshift.io/infrastructures", List.of("get"))),
      "vip", Map.ofEntries(
          Map.entry("/services", List.of("delete", "get", "list", "patch", "watch")),
          Map.entry("/services/status", List.of("patch")),
          Map.entry("/namespaces", List.of("get")),
          Map.entry("/events", List.of("create", "get", "update")),
          Map.entry("ipam.ipamoperators.org/ipclaims", List.of("create", "delete", "get", "list", "update", "watch")),
          Map.entry("ipam.ipamoperators.org/ipblocks", List.of("get", "list")),
          Map.entry("paas.org/ipgroups", List.of("list", "watch")),
          Map.entry("paas.org/ipgroups/status", List.of("patch")),
          Map.entry("paas.org/ips", List.of("get", "list", "patch")),
          Map.entry("paas.org/virtualips", READ_WRITE),
          Map.entry("paas.org/virtualips/status", List.of("update"))),
      "keepalived", Map.ofEntries(
          Map.entry("/services", List.of("list", "watch")),
          Map.entry("/nodes", List.of("list", "watch")),
          Map.entry("/namespaces", READ),
          Map.entry("/secrets", List.of("get")),
          Map.entry("/configmaps", List.of("create", "list", "patch", "watch")),
          Map.entry("apps/daemonsets", List.of("create", "list", "patch", "watch")),
          Map.entry("/events", List.of("create", "get", "update")),
          Map.entry("ipam.ipamoperators.org/idclaims",
              List.of("create", "delete", "get", "list", "update", "watch")),
          Map.entry("redhatcop.redhat.io/keepalivedgroups", List.of("get", "list", "patch", "watch")),
          Map.entry("redhatcop.redhat.io/keepalivedgroups/status", List.of("patch")),
          Map.entry("redhatcop.redhat.io/keepalivedgroups/finalizers", List.of("update")),
          Map.entry("monitoring.coreos.com/podmonitors", List.of("create", "list", "patch", "watch")),
          Map.entry("apiextensions.k8s.io/customresourcedefinitions", List.of("list", "watch"))),
      "eip", Map.ofEntries(
          Map.entry("/pods", List.of("get", "list", "patch", "watch")),
          Map.entry("/nodes", List.of("get", "list", "patch", "watch")),
          Map.entry("/namespaces", READ),
          Map.entry("/events", List.of("create", "get", "update")),
          Map.entry("ipam.ipamoperators.org/ipclaims", List.of("create", "delete", "get", "list")),
          Map.entry("ipam.ipamoperators.org/ipblocks", List.of("get", "list")),
          Map.entry("materialize.cloud/eips", List.of("create", "delete", "get", "list", "patch", "watch")),
          Map.entry("materialize.cloud/eips/status", List.of("patch"))));

  /**
   * Who reads Secrets, by name only (get; no list or watch, which would hand every Secret to the
   * operator): keepalived the password a KeepalivedGroup's passwordAuth names; egressip the old
   * operator's AWS credentials, in its own namespace.
   */
  private static final Map<String, List<String>> SECRET_READERS = Map.of("keepalived", List.of("get"), "egressip",
      List.of("get"));

  /** The namespaced rules besides leader election: exactly these, in the operator's namespace. */
  private static final Map<String, List<PolicyRule>> NAMESPACED = Map.of("egressip", List.of(
      new io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder().withApiGroups("").withResources("secrets")
          .withResourceNames("egress-ipam-operator-cloud-credentials").withVerbs("get").build()));

  static List<String> controllers() {
    return OperatorControllers.names();
  }

  @Test
  void everyControllerShipsManifestsAndAnExactGrantList() {
    assertThat(GRANTS.keySet()).containsExactlyInAnyOrderElementsOf(controllers());
  }

  @ParameterizedTest
  @MethodSource("controllers")
  void everyFileParsesAndEveryObjectIsNamedAndPlaced(String controller) {
    List<HasMetadata> all = Manifests.objects(controller);
    List<String> expected = new ArrayList<>(List.of("deployment.yaml", "monitoring/podmonitor.yaml",
        "namespace.yaml", "rbac.yaml", "service.yaml"));
    OperatorControllers.byName(controller).orElseThrow().crds()
        .forEach(crd -> expected.add("crds/" + CrdFiles.fileName(crd)));
    expected.add("monitoring/prometheusrule.yaml");
    assertThat(Manifests.files(controller)).extracting(p -> Manifests.dir(controller).relativize(p).toString())
        .containsExactlyInAnyOrderElementsOf(expected);
    for (HasMetadata o : all) {
      assertThat(o.getApiVersion()).as("apiVersion of %s", o.getKind()).isNotBlank();
      assertThat(o.getMetadata().getName()).as("name of a %s", o.getKind()).isNotBlank();
      boolean clusterScoped = o instanceof Namespace || o instanceof ClusterRole || o instanceof ClusterRoleBinding
          || o instanceof CustomResourceDefinition;
      assertThat(o.getMetadata().getNamespace()).as("namespace of %s %s", o.getKind(), o.getMetadata().getName())
          .isEqualTo(clusterScoped ? null : Manifests.NAMESPACE);
    }
    assertThat(Manifests.one(all, Namespace.class).getMetadata().getName()).isEqualTo(Manifests.NAMESPACE);
    // Every object carries the controller's component label, so one controller can be removed alone.
    assertThat(all).filteredOn(o -> !(o instanceof Namespace) && !(o instanceof CustomResourceDefinition))
        .allSatisfy(o -> assertThat(o.getMetadata().getLabels())
            .containsEntry("app.kubernetes.io/component", controller));
  }

  @ParameterizedTest
  @MethodSource("controllers")
  void theCrdsAreTheGeneratedOnesByteForByte(String controller) throws Exception {
    List<HasMetadata> all = Manifests.objects(controller);
    for (RequiredCrd crd : OperatorControllers.byName(controller).orElseThrow().crds()) {
      Path shipped = Manifests.dir(controller).resolve("crds").resolve(CrdFiles.fileName(crd));
      try (InputStream generated = getClass().getClassLoader().getResourceAsStream(crd.resource())) {
        assertThat(generated).as(crd.resource()).isNotNull();
        assertThat(Files.readAllBytes(shipped)).as(shipped.toString()).isEqualTo(generated.readAllBytes());
      }
      assertThat(Manifests.ofType(all, CustomResourceDefinition.class))
          .anyMatch(c -> c.getMetadata().getName().equals(crd.name()));
    }
  }

  @ParameterizedTest
  @MethodSource("controllers")
  void rbacHasNoWildcardsAndNoSecretsButTheOnesNamed(String controller) {
    List<HasMetadata> all = Manifests.objects(controller);
    List<PolicyRule> rules = new ArrayList<>();
    Manifests.ofType(all, ClusterRole.class).forEach(r -> rules.addAll(r.getRules()));
    Manifests.ofType(all, Role.class).forEach(r -> rules.addAll(r.getRules()));
    assertThat(rules).isNotEmpty();
    for (PolicyRule r : rules) {
      assertThat(r.getVerbs()).as("verbs of %s", r).isNotEmpty().doesNotContain("*");
      assertThat(r.getResources()).as("resources of %s", r).isNotEmpty().doesNotContain("*")
          .noneMatch(res -> res.endsWith("/*"));
      if (r.getResources().stream().anyMatch(res -> res.startsWith("secrets"))) {
        assertThat(SECRET_READERS).as("%s may not touch Secrets", controller).containsKey(controller);
        assertThat(r.getVerbs()).as("Secrets are read only").isSubsetOf(SECRET_READERS.get(controller));
      }
      assertThat(r.getApiGroups()).as("apiGroups of %s", r).isNotEmpty().doesNotContain("*");
      assertThat(r.getNonResourceURLs()).as("nonResourceURLs of %s", r).isNullOrEmpty();
      assertThat(r.getVerbs()).as("no escalation verbs in %s", r).doesNotContain("escalate", "bind", "impersonate");
    }
  }

  @ParameterizedTest
  @MethodSource("controllers")
  void theClusterRoleGrantsExactlyWhatTheControllerUses(String controller) {
    ClusterRole role = Manifests.one(Manifests.objects(controller), ClusterRole.class);
    Map<String, List<String>> grants = new TreeMap<>();
    for (PolicyRule r : role.getRules()) {
      assertThat(r.getResourceNames()).isNullOrEmpty();
      for (String g : r.getApiGroups()) {
        for (String res : r.getResources()) {
          assertThat(grants.put(g + "/" + res, r.getVerbs().stream().sorted().toList()))
              .as("%s/%s granted twice", g, res).isNull();
        }
      }
    }
    assertThat(grants).isEqualTo(new TreeMap<>(GRANTS.get(controller)));
  }

  @ParameterizedTest
  @MethodSource("controllers")
  void leasesOnlyInTheOperatorNamespaceAndOnlyTheDeploymentsLease(String controller) {
    List<HasMetadata> all = Manifests.objects(controller);
    Role role = Manifests.ofType(all, Role.class).stream()
        .filter(r -> r.getMetadata().getName().endsWith("-leader-election")).findFirst().orElseThrow();
    String lease = Manifests.arg(Manifests.one(all, Deployment.class), "--lease-name");
    assertThat(role.getRules()).allSatisfy(r -> {
      assertThat(r.getApiGroups()).containsExactly("coordination.k8s.io");
      assertThat(r.getResources()).containsExactly("leases");
    });
    assertThat(role.getRules()).anySatisfy(r -> {
      assertThat(r.getVerbs()).containsExactly("create");
      assertThat(r.getResourceNames()).isNullOrEmpty();
    });
    assertThat(role.getRules()).anySatisfy(r -> {
      assertThat(r.getVerbs()).containsExactlyInAnyOrder("get", "update", "patch");
      assertThat(r.getResourceNames()).containsExactly(lease);
    });
    ServiceAccount sa = Manifests.one(all, ServiceAccount.class);
    RoleBinding rb = Manifests.ofType(all, RoleBinding.class).stream()
        .filter(b -> b.getRoleRef().getName().equals(role.getMetadata().getName())).findFirst().orElseThrow();
    ClusterRoleBinding crb = Manifests.one(all, ClusterRoleBinding.class);
    assertThat(crb.getRoleRef().getName()).isEqualTo(Manifests.one(all, ClusterRole.class).getMetadata().getName());
    for (var subjects : List.of(rb.getSubjects(), crb.getSubjects())) {
      assertThat(subjects).singleElement().satisfies(s -> {
        assertThat(s.getKind()).isEqualTo("ServiceAccount");
        assertThat(s.getName()).isEqualTo(sa.getMetadata().getName());
        assertThat(s.getNamespace()).isEqualTo(Manifests.NAMESPACE);
      });
    }
  }

  @ParameterizedTest
  @MethodSource("controllers")
  void otherNamespacedRulesAreExactlyTheNamedOnes(String controller) {
    List<HasMetadata> all = Manifests.objects(controller);
    List<Role> others = Manifests.ofType(all, Role.class).stream()
        .filter(r -> !r.getMetadata().getName().endsWith("-leader-election")).toList();
    List<PolicyRule> rules = new ArrayList<>();
    others.forEach(r -> rules.addAll(r.getRules()));
    assertThat(rules).isEqualTo(NAMESPACED.getOrDefault(controller, List.of()));
    for (Role r : others) {
      assertThat(r.getMetadata().getNamespace()).isEqualTo(Manifests.NAMESPACE);
      assertThat(Manifests.ofType(all, RoleBinding.class))
          .anySatisfy(b -> {
            assertThat(b.getRoleRef().getName()).isEqualTo(r.getMetadata().getName());
            assertThat(b.getSubjects()).singleElement().satisfies(sub -> assertThat(sub.getName())
                .isEqualTo(Manifests.one(all, ServiceAccount.class).getMetadata().getName()));
          });
    }
  }

  @ParameterizedTest
  @MethodSource("controllers")
  void theDeploymentRunsTwoHardenedReplicasWithProbesOnTheHttpPort(String controller) {
    List<HasMetadata> all = Manifests.objects(controller);
    Deployment d = Manifests.one(all, Deployment.class);
    assertThat(d.getSpec().getReplicas()).isEqualTo(2);
    PodSpec pod = d.getSpec().getTemplate().getSpec();
    assertThat(pod.getServiceAccountName()).isEqualTo(Manifests.one(all, ServiceAccount.class).getMetadata().getName());
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    // No fixed UID: the image's non-root USER, or the one the platform assigns (OpenShift restricted-v2).
    assertThat(pod.getSecurityContext().getRunAsUser()).isNull();
    assertThat(pod.getContainers()).hasSize(1);
    Container c = pod.getContainers().get(0);
    // An image name without a registry host: where images live is the installer's choice.
    assertThat(c.getImage()).doesNotContain("@").isEqualTo("ipam-operators/" + controller + ":" + projectVersion());
    assertThat(Manifests.operatorArgs(d)).startsWith("operator").contains("--controllers=" + controller)
        .noneMatch(a -> a.contains("no-leader-election") || a.contains("install-crds") || a.contains("kubeconfig"));
    int port = Integer.parseInt(Manifests.arg(d, "--http-port"));
    assertThat(c.getPorts()).singleElement().satisfies(p -> {
      assertThat(p.getName()).isEqualTo("http");
      assertThat(p.getContainerPort()).isEqualTo(port);
    });
    assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
    assertThat(c.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("http");
    assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    assertThat(c.getReadinessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("http");
    assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
    assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(c.getResources().getLimits()).containsKey("memory");
    // readOnlyRootFilesystem: the JVM writes to /tmp only.
    assertThat(c.getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
    assertThat(d.getSpec().getTemplate().getMetadata().getLabels())
        .containsAllEntriesOf(d.getSpec().getSelector().getMatchLabels());
  }

  @ParameterizedTest
  @MethodSource("controllers")
  void metricsAreReachableThroughTheServiceAndThePodMonitor(String controller) {
    List<HasMetadata> all = Manifests.objects(controller);
    Deployment d = Manifests.one(all, Deployment.class);
    Map<String, String> podLabels = d.getSpec().getTemplate().getMetadata().getLabels();
    Service s = Manifests.one(all, Service.class);
    assertThat(podLabels).containsAllEntriesOf(s.getSpec().getSelector());
    assertThat(s.getSpec().getPorts()).singleElement().satisfies(p -> {
      assertThat(p.getTargetPort().getStrVal()).isEqualTo("http");
      assertThat(p.getPort()).isEqualTo(Integer.parseInt(Manifests.arg(d, "--http-port")));
    });
    GenericKubernetesResource pm = (GenericKubernetesResource) Manifests.byKind(all, "PodMonitor");
    Map<String, String> selector = pm.get("spec", "selector", "matchLabels");
    assertThat(podLabels).containsAllEntriesOf(selector);
    List<Map<String, Object>> endpoints = pm.get("spec", "podMetricsEndpoints");
    assertThat(endpoints).singleElement().satisfies(e -> {
      assertThat(e).containsEntry("port", "http").containsEntry("path", "/metrics").containsEntry("honorLabels", true);
    });
  }

  @Test
  void theUtilizationAlertsKeepTheirNamesAndThresholdsAndNeverFireOnUnknownCapacity() {
    GenericKubernetesResource rule =
        (GenericKubernetesResource) Manifests.byKind(Manifests.objects("egressip"), "PrometheusRule");
    assertThat(Manifests.objects("egressip")).filteredOn(o -> o.getKind().equals("PrometheusRule")).hasSize(1);
    assertThat(rule.getMetadata().getName()).isEqualTo("egressip-utilization");
    List<Map<String, Object>> groups = rule.get("spec", "groups");
    List<Map<String, Object>> rules = new ArrayList<>();
    groups.forEach(g -> rules.addAll(castList(g.get("rules"))));
    assertThat(rules).hasSize(2);
    Map<String, Object> high = alert(rules, "HighEgressIPUtilization");
    Map<String, Object> extreme = alert(rules, "ExtremelyHighEgressIPUtilization");
    String guarded = "ipam_egressip_ip_allocated / (ipam_egressip_ip_capacity > 0 and ipam_egressip_ip_capacity < +Inf)";
    assertThat(normalize(high.get("expr"))).isEqualTo(guarded + " > 0.8");
    assertThat(high).containsEntry("for", "10m");
    assertThat(castMap(high.get("labels"))).containsEntry("severity", "warning");
    assertThat(normalize(extreme.get("expr"))).isEqualTo(guarded + " > 0.95");
    assertThat(extreme).containsEntry("for", "5m");
    assertThat(castMap(extreme.get("labels"))).containsEntry("severity", "critical");
    for (Map<String, Object> a : List.of(high, extreme)) {
      assertThat(castMap(a.get("annotations"))).containsKeys("summary", "message");
      assertThat(castMap(a.get("annotations")).get("summary").toString()).contains("{{ $labels.node }}");
    }
  }

  @Test
  void theVipAlertsWatchPoolsOfKnownSizeAndWaitingServices() {
    List<HasMetadata> vip = Manifests.objects("vip");
    assertThat(vip).filteredOn(o -> o.getKind().equals("PrometheusRule")).hasSize(1);
    GenericKubernetesResource rule = (GenericKubernetesResource) Manifests.byKind(vip, "PrometheusRule");
    List<Map<String, Object>> groups = rule.get("spec", "groups");
    List<Map<String, Object>> rules = new ArrayList<>();
    groups.forEach(g -> rules.addAll(castList(g.get("rules"))));
    assertThat(normalize(alert(rules, "IPGroupNearlyExhausted").get("expr")))
        .isEqualTo("ipam_vip_pool_used / (ipam_vip_pool_size > 0) > 0.9");
    assertThat(normalize(alert(rules, "LoadBalancerServicesPending").get("expr")))
        .isEqualTo("ipam_vip_services_pending > 0");
  }

  @Test
  void theEipAlertsWatchTheQuotaFailedAllocationsAndIdleAddressesOnMetricsTheControllerExports() {
    List<HasMetadata> eip = Manifests.objects("eip");
    assertThat(eip).filteredOn(o -> o.getKind().equals("PrometheusRule")).hasSize(1);
    GenericKubernetesResource rule = (GenericKubernetesResource) Manifests.byKind(eip, "PrometheusRule");
    List<Map<String, Object>> groups = rule.get("spec", "groups");
    List<Map<String, Object>> rules = new ArrayList<>();
    groups.forEach(g -> rules.addAll(castList(g.get("rules"))));
    assertThat(normalize(alert(rules, "ElasticIpQuotaNearlyExhausted").get("expr")))
        .isEqualTo("ipam_eip_quota_used / (ipam_eip_quota > 0) > 0.9");
    assertThat(normalize(alert(rules, "ElasticIpAllocationsFailing").get("expr")))
        .isEqualTo("increase(ipam_eip_allocate_failures_total[15m]) > 0");
    assertThat(normalize(alert(rules, "EipsNotAssociated").get("expr"))).isEqualTo("ipam_eip_allocated - ipam_eip_associated > 0");
  }

  private static Map<String, Object> alert(List<Map<String, Object>> rules, String name) {
    return rules.stream().filter(r -> name.equals(r.get("alert"))).findFirst()
        .orElseThrow(() -> new AssertionError("no alert " + name));
  }

  private static String normalize(Object expr) {
    return expr.toString().replaceAll("\\s+", " ").trim();
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> castList(Object o) {
    return (List<Map<String, Object>>) o;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> castMap(Object o) {
    return (Map<String, Object>) o;
  }

  private static String projectVersion() {
    String v = IpamCommand.class.getPackage().getImplementationVersion();
    if (v != null) {
      return v;
    }
    // Not from a jar: the version the pom declares.
    try {
      String pom = Files.readString(Path.of("pom.xml"));
      int parent = pom.indexOf("<parent>");
      int start = pom.indexOf("<version>", parent) + "<version>".length();
      return pom.substring(start, pom.indexOf("</version>", start)).trim();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
