package org.ipamoperators.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import io.fabric8.kubernetes.api.model.Container;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Writes the OLM bundle ({@code registry+v1}) from the hand-written part of the
 * ClusterServiceVersion ({@code src/main/olm/csv.yaml}), the examples, the generated CRDs and the
 * chart's objects with every controller enabled: the install strategy holds exactly the chart's
 * Deployments and RBAC, so OLM and Helm users run the same thing; {@code relatedImages} lists every image
 * those Deployments use and the icon is the chart's. Same inputs, same bytes.
 */
final class OlmBundle {
  static final String PACKAGE = "ipam-operators";
  static final String CHANNEL = "alpha";

  private static final Pattern DATA_URI = Pattern.compile("^data:([^;,]+);base64,(.+)$");
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
   * @param chartMeta the chart's Chart.yaml: its version, and its icon (a data: URI) as the CSV's
   * @param out the bundle directory (written: {@code manifests/}, {@code metadata/}, {@code bundle.Dockerfile})
   */
  @SuppressWarnings("unchecked")
  static void write(Path olmSources, Path crds, List<HasMetadata> chartObjects, Map<?, ?> chartMeta, Path out)
      throws IOException {
    String version = chartMeta.get("version").toString();
    Path manifests = out.resolve("manifests");
    Files.createDirectories(manifests);
    Files.createDirectories(out.resolve("metadata"));
    List<CustomResourceDefinition> definitions = new ArrayList<>();
    for (Path f : sorted(crds)) {
      definitions.add(SERIALIZATION.unmarshal(Files.readString(f), CustomResourceDefinition.class));
      Files.copy(f, manifests.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    }
    Map<String, Object> csv = csv(olmSources, definitions, chartObjects, version);
    ((Map<String, Object>) csv.get("spec")).put("icon", List.of(icon(chartMeta.get("icon").toString())));
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

    spec.put("relatedImages", relatedImages(deployments));

    Map<String, Object> install = new LinkedHashMap<>();
    install.put("strategy", "deployment");
    install.put("spec", installSpec(chartObjects, deployments));
    spec.put("install", install);
    return csv;
  }

  /**
   * Every image the Deployments run or hand on (an {@code *_IMAGE} variable: the keepalived DaemonSets' images),
   * once each, named after its repository's last part: what a disconnected install mirrors.
   */
  static List<Map<String, String>> relatedImages(List<Deployment> deployments) {
    Map<String, String> byImage = new LinkedHashMap<>();
    for (Deployment d : deployments) {
      var pod = d.getSpec().getTemplate().getSpec();
      List<Container> containers = new ArrayList<>(pod.getContainers());
      containers.addAll(pod.getInitContainers());
      for (var c : containers) {
        byImage.putIfAbsent(c.getImage(), imageName(c.getImage()));
        c.getEnv().stream().filter(e -> e.getName().endsWith("_IMAGE") && e.getValue() != null)
            .forEach(e -> byImage.putIfAbsent(e.getValue(), imageName(e.getValue())));
      }
    }
    List<Map<String, String>> out = new ArrayList<>();
    byImage.forEach((image, name) -> out.add(Map.of("name", name, "image", image)));
    return out;
  }

  /** {@code ipam-operators/egressip:1.0} is named {@code egressip}. */
  private static String imageName(String image) {
    String withoutDigest = image.split("@", 2)[0];
    String path = withoutDigest.substring(withoutDigest.lastIndexOf('/') + 1);
    int tag = path.indexOf(':');
    return tag < 0 ? path : path.substring(0, tag);
  }

  /** The CSV's icon from a {@code data:<media type>;base64,<data>} URI. */
  static Map<String, String> icon(String dataUri) {
    Matcher m = DATA_URI.matcher(dataUri);
    if (!m.matches()) {
      throw new IllegalStateException("Chart.yaml's icon is not a base64 data: URI");
    }
    Map<String, String> icon = new LinkedHashMap<>();
    icon.put("base64data", m.group(2));
    icon.put("mediatype", m.group(1));
    return icon;
  }

  /** The chart's Deployments and, per ServiceAccount, its ClusterRole and Role rules. */
  private static Map<String, Object> installSpec(List<HasMetadata> objects, List<Deployment> deployments) {
    List<Map<String, Object>> clusterPermissions = new ArrayList<>();
    for (ClusterRoleBinding b : Manifests.ofType(objects, ClusterRoleBinding.class)) {
      ClusterRole role = Manifests.ofType(objects, ClusterRole.class).stream()
          .filter(r -> r.getMetadata().getName().equals(b.getRoleRef().getName())).findFirst().orElseThrow();
      clusterPermissions.add(permission(b.getSubjects().get(0).getName(), role.getRules()));
    }
    // One entry per ServiceAccount: its leader-election Role and any other Role, rules together. OLM grants these
    // in the install namespace only: a Role the chart renders into another namespace has no place in a CSV.
    Map<String, List<Object>> namespacedRules = new LinkedHashMap<>();
    for (RoleBinding b : Manifests.ofType(objects, RoleBinding.class)) {
      if (!b.getMetadata().getNamespace().equals(b.getSubjects().get(0).getNamespace())) {
        throw new IllegalStateException("the OLM bundle cannot carry the Role in namespace "
            + b.getMetadata().getNamespace() + " (" + b.getMetadata().getName() + ")");
      }
      Role role = Manifests.ofType(objects, Role.class).stream()
          .filter(r -> r.getMetadata().getName().equals(b.getRoleRef().getName())
              && r.getMetadata().getNamespace().equals(b.getMetadata().getNamespace())).findFirst().orElseThrow();
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
