package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.ipamoperators.cli.operator.OperatorControllers;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * The OLM bundle as the build writes it: registry+v1 layout, every CRD owned with its storage
 * version, the install strategy equal to the chart's Deployments and RBAC, and examples that the
 * real apiserver accepts against the bundle's CRDs. (OLM itself does not run here: its CSV CRD and
 * operator-sdk's bundle validation are not available offline.)
 */
@KubeApiTest
class OlmBundleIT {
  private static final Path BUNDLE = Path.of("target", "olm", "bundle");
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  @Test
  void theLayoutAndAnnotationsAreRegistryV1() throws Exception {
    Map<String, Map<String, String>> annotations = yaml(BUNDLE.resolve("metadata/annotations.yaml"));
    assertThat(annotations.get("annotations")).containsEntry("operators.operatorframework.io.bundle.mediatype.v1",
        "registry+v1").containsEntry("operators.operatorframework.io.bundle.manifests.v1", "manifests/")
        .containsEntry("operators.operatorframework.io.bundle.metadata.v1", "metadata/")
        .containsEntry("operators.operatorframework.io.bundle.package.v1", "ipam-operators")
        .containsEntry("operators.operatorframework.io.bundle.channel.default.v1", "alpha");
    String dockerfile = Files.readString(BUNDLE.resolve("bundle.Dockerfile"));
    annotations.get("annotations").forEach((k, v) -> assertThat(dockerfile).contains("LABEL " + k + "=" + v + "\n"));
    assertThat(dockerfile).contains("COPY manifests /manifests/", "COPY metadata /metadata/");
  }

  @Test
  @SuppressWarnings("unchecked")
  void everyCrdIsOwnedWithItsStorageVersion() throws Exception {
    Map<String, Object> csv = csv();
    List<Map<String, Object>> owned = (List<Map<String, Object>>) ((Map<String, Object>) spec(csv)
        .get("customresourcedefinitions")).get("owned");
    List<CustomResourceDefinition> crds = crds();
    assertThat(crds).hasSize(OperatorControllers.crds(OperatorControllers.names().stream()
        .map(n -> OperatorControllers.byName(n).orElseThrow()).toList()).size());
    assertThat(owned).hasSameSizeAs(crds);
    for (CustomResourceDefinition crd : crds) {
      String storage = crd.getSpec().getVersions().stream().filter(v -> v.getStorage()).findFirst().orElseThrow()
          .getName();
      assertThat(owned).anySatisfy(o -> assertThat(o).containsEntry("name", crd.getMetadata().getName())
          .containsEntry("kind", crd.getSpec().getNames().getKind()).containsEntry("version", storage)
          .containsKeys("displayName", "description"));
    }
    String version = ChartManifests.chartVersion(Path.of("target", "helm", "ipam-operators"));
    assertThat(((Map<String, Object>) csv.get("metadata")).get("name")).isEqualTo("ipam-operators.v" + version);
    assertThat(spec(csv).get("version")).isEqualTo(version);
    assertThat((List<Map<String, Object>>) spec(csv).get("installModes"))
        .allSatisfy(m -> assertThat(m.get("supported")).isEqualTo(m.get("type").equals("AllNamespaces")));
  }

  @Test
  @SuppressWarnings("unchecked")
  void theInstallStrategyIsTheChartWithEveryController() throws Exception {
    List<HasMetadata> chart = ChartManifests.objects(ChartManifests.renderAll(Path.of("target", "helm",
        "ipam-operators")));
    Map<String, Object> install = (Map<String, Object>) ((Map<String, Object>) spec(csv()).get("install")).get("spec");
    List<Map<String, Object>> deployments = (List<Map<String, Object>>) install.get("deployments");
    assertThat(deployments).extracting(d -> d.get("name")).containsExactlyInAnyOrderElementsOf(
        Manifests.ofType(chart, Deployment.class).stream().map(d -> d.getMetadata().getName()).toList());
    assertThat(deployments).hasSize(OperatorControllers.names().size());
    List<Map<String, Object>> clusterPermissions = (List<Map<String, Object>>) install.get("clusterPermissions");
    for (Map<String, Object> d : deployments) {
      Deployment deployment = SERIALIZATION.convertValue(Map.of("apiVersion", "apps/v1", "kind", "Deployment",
          "metadata", Map.of("name", d.get("name")), "spec", d.get("spec")), Deployment.class);
      String sa = deployment.getSpec().getTemplate().getSpec().getServiceAccountName();
      ClusterRole role = Manifests.ofType(chart, ClusterRole.class).stream()
          .filter(r -> r.getMetadata().getName().equals(sa)).findFirst().orElseThrow();
      Map<String, Object> permission = clusterPermissions.stream().filter(p -> sa.equals(p.get("serviceAccountName")))
          .findFirst().orElseThrow(() -> new AssertionError("no clusterPermissions for " + sa));
      List<PolicyRule> rules = List.of(SERIALIZATION.convertValue(permission.get("rules"), PolicyRule[].class));
      assertThat(rules).isEqualTo(role.getRules());
      assertThat((List<Map<String, Object>>) install.get("permissions"))
          .anySatisfy(p -> assertThat(p).containsEntry("serviceAccountName", sa));
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void theExamplesAreAcceptedByTheApiServer(KubernetesClient client) throws Exception {
    for (CustomResourceDefinition crd : crds()) {
      client.resource(crd).forceConflicts().fieldManager("olm-test").serverSideApply();
    }
    Map<String, Object> annotations = (Map<String, Object>) ((Map<String, Object>) csv().get("metadata"))
        .get("annotations");
    String examples = (String) annotations.get("alm-examples");
    List<GenericKubernetesResource> list = List.of(new ObjectMapper().readValue(examples,
        GenericKubernetesResource[].class));
    assertThat(list).extracting(GenericKubernetesResource::getKind).contains("EgressIPAM", "IPGroup");
    for (GenericKubernetesResource example : list) {
      // Server-side dry run: the apiserver validates against the CRD's schema and CEL rules, stores nothing.
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).ignoreExceptions()
          .untilAsserted(() -> assertThat(client.resource(example).dryRun().create()).isNotNull());
    }
  }

  private static List<CustomResourceDefinition> crds() throws Exception {
    try (Stream<Path> s = Files.list(BUNDLE.resolve("manifests"))) {
      return s.filter(p -> !p.getFileName().toString().contains("clusterserviceversion")).sorted()
          .map(p -> SERIALIZATION.unmarshal(read(p), CustomResourceDefinition.class)).toList();
    }
  }

  private static Map<String, Object> csv() throws Exception {
    return yaml(BUNDLE.resolve("manifests/ipam-operators.clusterserviceversion.yaml"));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(Map<String, Object> csv) {
    return (Map<String, Object>) csv.get("spec");
  }

  @SuppressWarnings("unchecked")
  private static <T> T yaml(Path p) throws Exception {
    return (T) new ObjectMapper(new YAMLFactory()).readValue(p.toFile(), Map.class);
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
