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
import org.ipamoperators.cli.OperatorControllers.RequiredCrd;
import org.junit.jupiter.api.Test;

/** The egressip manifests as shipped: well-formed, least privilege, probes and alerts as documented. */
class ManifestsTest {
  private static final List<HasMetadata> ALL = Manifests.objects("egressip");

  @Test
  void everyFileParsesAndEveryObjectIsNamedAndPlaced() {
    assertThat(Manifests.files("egressip")).extracting(p -> Manifests.dir("egressip").relativize(p).toString())
        .containsExactlyInAnyOrder("crds/egressipams.redhatcop.redhat.io-v1.yml",
            "crds/ipclaims.ipam.ipamoperators.org-v1.yml", "deployment.yaml", "monitoring/podmonitor.yaml",
            "monitoring/prometheusrule.yaml", "namespace.yaml", "rbac.yaml", "service.yaml");
    for (HasMetadata o : ALL) {
      assertThat(o.getApiVersion()).as("apiVersion of %s", o.getKind()).isNotBlank();
      assertThat(o.getMetadata().getName()).as("name of a %s", o.getKind()).isNotBlank();
      boolean clusterScoped = o instanceof Namespace || o instanceof ClusterRole || o instanceof ClusterRoleBinding
          || o instanceof CustomResourceDefinition;
      assertThat(o.getMetadata().getNamespace()).as("namespace of %s %s", o.getKind(), o.getMetadata().getName())
          .isEqualTo(clusterScoped ? null : Manifests.NAMESPACE);
    }
    assertThat(Manifests.one(ALL, Namespace.class).getMetadata().getName()).isEqualTo(Manifests.NAMESPACE);
  }

  @Test
  void theCrdsAreTheGeneratedOnesByteForByte() throws Exception {
    for (RequiredCrd crd : OperatorControllers.byName("egressip").orElseThrow().crds()) {
      Path shipped = Manifests.dir("egressip").resolve("crds").resolve(CrdFiles.fileName(crd));
      try (InputStream generated = getClass().getClassLoader().getResourceAsStream(crd.resource())) {
        assertThat(generated).as(crd.resource()).isNotNull();
        assertThat(Files.readAllBytes(shipped)).as(shipped.toString()).isEqualTo(generated.readAllBytes());
      }
      assertThat(Manifests.ofType(ALL, CustomResourceDefinition.class))
          .anyMatch(c -> c.getMetadata().getName().equals(crd.name()));
    }
  }

  @Test
  void rbacHasNoWildcardsAndNoSecrets() {
    List<PolicyRule> rules = new ArrayList<>();
    Manifests.ofType(ALL, ClusterRole.class).forEach(r -> rules.addAll(r.getRules()));
    Manifests.ofType(ALL, Role.class).forEach(r -> rules.addAll(r.getRules()));
    assertThat(rules).isNotEmpty();
    for (PolicyRule r : rules) {
      assertThat(r.getVerbs()).as("verbs of %s", r).isNotEmpty().doesNotContain("*");
      assertThat(r.getResources()).as("resources of %s", r).isNotEmpty().doesNotContain("*")
          .noneMatch(res -> res.startsWith("secrets") || res.endsWith("/*"));
      assertThat(r.getApiGroups()).as("apiGroups of %s", r).isNotEmpty().doesNotContain("*");
      assertThat(r.getNonResourceURLs()).as("nonResourceURLs of %s", r).isNullOrEmpty();
      assertThat(r.getVerbs()).as("no escalation verbs in %s", r).doesNotContain("escalate", "bind", "impersonate");
    }
  }

  @Test
  void theClusterRoleGrantsExactlyWhatTheControllerUses() {
    ClusterRole role = Manifests.one(ALL, ClusterRole.class);
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
    List<String> all = List.of("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch");
    assertThat(grants).isEqualTo(new TreeMap<>(Map.ofEntries(
        Map.entry("/namespaces", List.of("get", "list", "patch", "update", "watch")),
        Map.entry("/nodes", List.of("get", "list", "patch", "update", "watch")),
        Map.entry("/events", List.of("create", "get", "patch", "update")),
        Map.entry("ipam.ipamoperators.org/ipclaims", all),
        Map.entry("redhatcop.redhat.io/egressipams", List.of("get", "list", "patch", "update", "watch")),
        Map.entry("redhatcop.redhat.io/egressipams/status", List.of("get", "patch", "update")),
        Map.entry("redhatcop.redhat.io/egressipams/finalizers", List.of("update")),
        Map.entry("network.openshift.io/hostsubnets", List.of("get", "list", "patch", "update", "watch")),
        Map.entry("network.openshift.io/netnamespaces", List.of("get", "list", "patch", "update", "watch")),
        Map.entry("k8s.ovn.org/egressips", all),
        Map.entry("config.openshift.io/infrastructures", List.of("get", "list", "watch")))));
  }

  @Test
  void leasesOnlyInTheOperatorNamespaceAndOnlyTheDeploymentsLease() {
    Role role = Manifests.one(ALL, Role.class);
    String lease = Manifests.arg(Manifests.one(ALL, Deployment.class), "--lease-name");
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
    ServiceAccount sa = Manifests.one(ALL, ServiceAccount.class);
    RoleBinding rb = Manifests.one(ALL, RoleBinding.class);
    ClusterRoleBinding crb = Manifests.one(ALL, ClusterRoleBinding.class);
    assertThat(rb.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
    assertThat(crb.getRoleRef().getName()).isEqualTo(Manifests.one(ALL, ClusterRole.class).getMetadata().getName());
    for (var subjects : List.of(rb.getSubjects(), crb.getSubjects())) {
      assertThat(subjects).singleElement().satisfies(s -> {
        assertThat(s.getKind()).isEqualTo("ServiceAccount");
        assertThat(s.getName()).isEqualTo(sa.getMetadata().getName());
        assertThat(s.getNamespace()).isEqualTo(Manifests.NAMESPACE);
      });
    }
  }

  @Test
  void theDeploymentRunsTwoHardenedReplicasWithProbesOnTheHttpPort() {
    Deployment d = Manifests.one(ALL, Deployment.class);
    assertThat(d.getSpec().getReplicas()).isEqualTo(2);
    PodSpec pod = d.getSpec().getTemplate().getSpec();
    assertThat(pod.getServiceAccountName()).isEqualTo(Manifests.one(ALL, ServiceAccount.class).getMetadata().getName());
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSecurityContext().getRunAsUser()).isPositive();
    assertThat(pod.getContainers()).hasSize(1);
    Container c = pod.getContainers().get(0);
    assertThat(c.getImage()).doesNotContain("@").endsWith(":" + projectVersion());
    assertThat(Manifests.operatorArgs(d)).startsWith("operator").contains("--controllers=egressip")
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

  @Test
  void metricsAreReachableThroughTheServiceAndThePodMonitor() {
    Deployment d = Manifests.one(ALL, Deployment.class);
    Map<String, String> podLabels = d.getSpec().getTemplate().getMetadata().getLabels();
    Service s = Manifests.one(ALL, Service.class);
    assertThat(podLabels).containsAllEntriesOf(s.getSpec().getSelector());
    assertThat(s.getSpec().getPorts()).singleElement().satisfies(p -> {
      assertThat(p.getTargetPort().getStrVal()).isEqualTo("http");
      assertThat(p.getPort()).isEqualTo(Integer.parseInt(Manifests.arg(d, "--http-port")));
    });
    GenericKubernetesResource pm = (GenericKubernetesResource) Manifests.byKind(ALL, "PodMonitor");
    Map<String, String> selector = pm.get("spec", "selector", "matchLabels");
    assertThat(podLabels).containsAllEntriesOf(selector);
    List<Map<String, Object>> endpoints = pm.get("spec", "podMetricsEndpoints");
    assertThat(endpoints).singleElement().satisfies(e -> {
      assertThat(e).containsEntry("port", "http").containsEntry("path", "/metrics");
    });
  }

  @Test
  void theUtilizationAlertsKeepTheirNamesAndThresholdsAndNeverFireOnUnknownCapacity() {
    GenericKubernetesResource rule = (GenericKubernetesResource) Manifests.byKind(ALL, "PrometheusRule");
    assertThat(rule.getMetadata().getName()).isEqualTo("egressip-utilization");
    List<Map<String, Object>> groups = rule.get("spec", "groups");
    List<Map<String, Object>> rules = new ArrayList<>();
    groups.forEach(g -> rules.addAll(castList(g.get("rules"))));
    assertThat(rules).hasSize(2);
    Map<String, Object> high = alert(rules, "HighEgressIPUtilization");
    Map<String, Object> extreme = alert(rules, "ExtremelyHighEgressIPUtilization");
    String guarded = "egressip_ip_allocated / (egressip_ip_capacity > 0 and egressip_ip_capacity < +Inf)";
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
