package org.ipamoperators.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Writes the OLM bundle ({@code registry+v1}) from the hand-written part of the
 * ClusterServiceVersion ({@code src/main/olm/csv.yaml}), the examples, the generated CRDs and the
 * chart's objects with every controller enabled: the install strategy holds exactly the chart's
 * Deployments and RBAC, so OLM and Helm users run the same thing. Same inputs, same bytes.
 */
final class OlmBundle {
  static final String PACKAGE = "ipam-operators";
  static final String CHANNEL = "alpha";

  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
      .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES))
      .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

  private OlmBundle() {
  }

  /**
   * @param olmSources {@code src/main/olm}: {@code csv.yaml} and {@code examples/}
   * @param crds the chart's {@code crds/}
   * @param chartObjects the chart's objects, every controller enabled
   * @param out the bundle directory (written: {@code manifests/}, {@code metadata/}, {@code bundle.Dockerfile})
   */
  static void write(Path olmSources, Path crds, List<HasMetadata> chartObjects, String version, Path out)
      throws IOException {
    Path manifests = out.resolve("manifests");
    Files.createDirectories(manifests);
    Files.createDirectories(out.resolve("metadata"));
    List<CustomResourceDefinition> definitions = new ArrayList<>();
    for (Path f : sorted(crds)) {
      definitions.add(SERIALIZATION.unmarshal(Files.readString(f), CustomResourceDefinition.class));
      Files.copy(f, manifests.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    }
    Map<String, Object> csv = csv(olmSources, definitions, chartObjects, version);
    Files.writeString(manifests.resolve(PACKAGE + ".clusterserviceversion.yaml"), YAML.writeValueAsString(csv));
    Files.writeString(out.resolve("metadata").resolve("annotations.yaml"),
        YAML.writeValueAsString(Map.of("annotations", annotations())));
    StringBuilder dockerfile = new StringBuilder("FROM scratch\n");
    annotations().forEach((k, v) -> dockerfile.append("LABEL ").append(k).append('=').append(v).append('\n'));
    dockerfile.append("COPY manifests /manifests/\nCOPY metadata /metadata/\n");
    Files.writeString(out.resolve("bundle.Dockerfile"), dockerfile.toString());
  }

  static Map<String, String> annotations() {
    Map<String, String> a = new LinkedHashMap<>();
    a.put("operators.operatorframework.io.bundle.mediatype.v1", "registry+v1");
    a.put("operators.operatorframework.io.bundle.manifests.v1", "manifests/");
    a.put("operators.operatorframework.io.bundle.metadata.v1", "metadata/");
    a.put("operators.operatorframework.io.bundle.package.v1", PACKAGE);
    a.put("operators.operatorframework.io.bundle.channels.v1", CHANNEL);
    a.put("operators.operatorframework.io.bundle.channel.default.v1", CHANNEL);
    return a;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> csv(Path olmSources, List<CustomResourceDefinition> definitions,
      List<HasMetadata> chartObjects, String version) throws IOException {
    Map<String, Object> csv = YAML.readValue(olmSources.resolve("csv.yaml").toFile(), Map.class);
    Map<String, Object> metadata = (Map<String, Object>) csv.get("metadata");
    Map<String, Object> spec = (Map<String, Object>) csv.get("spec");
    metadata.put("name", PACKAGE + ".v" + version);
    spec.put("version", version);

    Map<String, Object> annotations = (Map<String, Object>) metadata.get("annotations");
    List<Deployment> deployments = Manifests.ofType(chartObjects, Deployment.class);
    annotations.put("containerImage", deployments.get(0).getSpec().getTemplate().getSpec().getContainers().get(0)
        .getImage());
    List<Object> examples = new ArrayList<>();
    for (Path f : sorted(olmSources.resolve("examples"))) {
      examples.add(YAML.readValue(f.toFile(), Map.class));
    }
    annotations.put("alm-examples", new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
        .writeValueAsString(examples));

    // Every CRD owned, with its storage version; a CRD missing from csv.yaml stops the build.
    List<Map<String, Object>> owned = (List<Map<String, Object>>) ((Map<String, Object>) spec
        .get("customresourcedefinitions")).get("owned");
    for (CustomResourceDefinition crd : definitions) {
      Map<String, Object> entry = owned.stream().filter(o -> crd.getMetadata().getName().equals(o.get("name")))
          .findFirst().orElseThrow(() -> new IllegalStateException(
              "src/main/olm/csv.yaml does not describe the CRD " + crd.getMetadata().getName()));
      entry.put("version", crd.getSpec().getVersions().stream().filter(CustomResourceDefinitionVersion::getStorage)
          .findFirst().orElseThrow().getName());
    }
    if (owned.size() != definitions.size()) {
      throw new IllegalStateException("src/main/olm/csv.yaml describes CRDs the controllers do not define");
    }

    Map<String, Object> install = new LinkedHashMap<>();
    install.put("strategy", "deployment");
    install.put("spec", installSpec(chartObjects, deployments));
    spec.put("install", install);
    return csv;
  }

  /** The chart's Deployments and, per ServiceAccount, its ClusterRole and Role rules. */
  private static Map<String, Object> installSpec(List<HasMetadata> objects, List<Deployment> deployments) {
    List<Map<String, Object>> clusterPermissions = new ArrayList<>();
    for (ClusterRoleBinding b : Manifests.ofType(objects, ClusterRoleBinding.class)) {
      ClusterRole role = Manifests.ofType(objects, ClusterRole.class).stream()
          .filter(r -> r.getMetadata().getName().equals(b.getRoleRef().getName())).findFirst().orElseThrow();
      clusterPermissions.add(permission(b.getSubjects().get(0).getName(), role.getRules()));
    }
    // One entry per ServiceAccount: its leader-election Role and any other Role, rules together.
    Map<String, List<Object>> namespacedRules = new LinkedHashMap<>();
    for (RoleBinding b : Manifests.ofType(objects, RoleBinding.class)) {
      Role role = Manifests.ofType(objects, Role.class).stream()
          .filter(r -> r.getMetadata().getName().equals(b.getRoleRef().getName())).findFirst().orElseThrow();
      namespacedRules.computeIfAbsent(b.getSubjects().get(0).getName(), k -> new ArrayList<>())
          .addAll(role.getRules());
    }
    List<Map<String, Object>> permissions = new ArrayList<>();
    namespacedRules.forEach((sa, rules) -> permissions.add(permission(sa, rules)));
    List<Map<String, Object>> deploymentSpecs = new ArrayList<>();
    for (Deployment d : deployments) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("name", d.getMetadata().getName());
      entry.put("label", d.getMetadata().getLabels());
      entry.put("spec", tree(d.getSpec()));
      deploymentSpecs.add(entry);
    }
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("clusterPermissions", clusterPermissions);
    spec.put("permissions", permissions);
    spec.put("deployments", deploymentSpecs);
    return spec;
  }

  private static Map<String, Object> permission(String serviceAccount, Object rules) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("serviceAccountName", serviceAccount);
    p.put("rules", tree(rules));
    return p;
  }

  @SuppressWarnings("unchecked")
  private static <T> T tree(Object o) {
    return (T) SERIALIZATION.unmarshal(SERIALIZATION.asJson(o), Object.class);
  }

  private static List<Path> sorted(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(Files::isRegularFile).sorted().toList();
    }
  }
}
