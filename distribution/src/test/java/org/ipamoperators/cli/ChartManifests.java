package org.ipamoperators.cli;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
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
import org.ipamoperators.cli.operator.OperatorControllers;

/**
 * Renders the plain manifests of {@code target/kubernetes/<controller>/} from the Helm chart, so the
 * chart is the one source of every object we ship: {@code helm template ipam} with one controller
 * enabled and monitoring on, each template's output in a file named after the template.
 *
 * <p>A build step, not a test: the build runs it after the test classes are compiled (it lives with the
 * tests; helm-java is in {@code ipam.jar} for {@code ipam demo --node}, never in an image). The ClusterRoles
 * aggregated into view, edit and admin go to {@code target/kubernetes/aggregated-clusterroles.yaml}. It also
 * packages the chart as {@code target/helm/ipam-operators-<version>.tgz} and writes the OLM bundle from the
 * chart with every controller enabled ({@link OlmBundle}).
 */
public final class ChartManifests {
  static final String RELEASE = "ipam";
  /** The oldest Kubernetes the chart supports (Chart.yaml kubeVersion): CEL rules in CRDs are GA from 1.29. */
  static final String MIN_KUBE_VERSION = "1.29.0";
  /** The plain manifests' file of the aggregated ClusterRoles, and the chart's template of them. */
  static final String AGGREGATED_ROLES = "aggregated-clusterroles.yaml";
  static final String AGGREGATED_ROLES_TEMPLATE = "rbac-aggregated.yaml";
  private static final Pattern SOURCE = Pattern.compile("^# Source: [^/]+/templates/(.+)$", Pattern.MULTILINE);

  private ChartManifests() {
  }

  /** Arguments: the chart, the manifests' directory, the namespace manifest, OLM sources, bundle directory. */
  public static void main(String[] args) throws IOException {
    if (args.length != 5) {
      throw new IllegalArgumentException(
          "usage: ChartManifests CHART_DIR OUTPUT_DIR NAMESPACE_YAML OLM_SOURCES BUNDLE_DIR");
    }
    Path chart = Path.of(args[0]);
    Path out = Path.of(args[1]);
    Path namespace = Path.of(args[2]);
    for (String controller : OperatorControllers.names()) {
      Path dir = out.resolve(controller);
      for (Map.Entry<String, String> file : render(chart, controller).entrySet()) {
        Path target = dir.resolve(file.getKey());
        Files.createDirectories(target.getParent());
        Files.writeString(target, file.getValue());
      }
      Files.copy(namespace, dir.resolve("namespace.yaml"), StandardCopyOption.REPLACE_EXISTING);
    }
    Files.writeString(out.resolve(AGGREGATED_ROLES), aggregatedRoles(chart));
    new Helm(chart).packageIt().withDestination(chart.getParent()).call();
    OlmBundle.write(Path.of(args[3]), chart.resolve("crds"), objects(renderAll(chart)), chartMeta(chart),
        Path.of(args[4]));
  }

  /**
   * The ClusterRoles aggregated into view, edit and admin: they cover every controller's CRDs, so the plain
   * manifests hold them once, beside the controllers' directories, and no controller's directory does.
   */
  static String aggregatedRoles(Path chart) {
    TemplateCommand template = new Helm(chart).template().withName(RELEASE).withNamespace(Manifests.NAMESPACE)
        .withKubeVersion(MIN_KUBE_VERSION).skipCrds();
    String roles = split(template.call()).get(AGGREGATED_ROLES_TEMPLATE);
    if (roles == null) {
      throw new IllegalStateException("the chart renders no " + AGGREGATED_ROLES_TEMPLATE);
    }
    return roles;
  }

  /**
   * Every controller enabled, no monitoring objects (OLM installs no PodMonitor) and no aggregated ClusterRoles
   * (OLM makes its own for the CRDs a CSV owns).
   */
  static String renderAll(Path chart) {
    TemplateCommand template = new Helm(chart).template().withName(RELEASE).withNamespace(Manifests.NAMESPACE)
        .withKubeVersion(MIN_KUBE_VERSION).skipCrds().set("rbac.aggregatedRoles", false);
    OperatorControllers.names().forEach(c -> template.set("controllers." + c + ".enabled", true));
    return template.call();
  }

  static List<HasMetadata> objects(String rendered) {
    KubernetesSerialization serialization = new KubernetesSerialization();
    List<HasMetadata> out = new ArrayList<>();
    for (String body : split(rendered).values()) {
      Object parsed = serialization.unmarshal(body);
      if (parsed instanceof List<?> list) {
        list.forEach(o -> out.add((HasMetadata) o));
      } else {
        out.add((HasMetadata) parsed);
      }
    }
    return out;
  }

  static String chartVersion(Path chart) throws IOException {
    return chartMeta(chart).get("version").toString();
  }

  /** The chart's Chart.yaml. */
  static Map<?, ?> chartMeta(Path chart) throws IOException {
    return new KubernetesSerialization().unmarshal(Files.readString(chart.resolve("Chart.yaml")), Map.class);
  }

  /** The chart's objects for one controller, in the namespace {@code ipam-operators}, by file name. */
  static Map<String, String> render(Path chart, String controller) {
    TemplateCommand template = new Helm(chart).template().withName(RELEASE).withNamespace(Manifests.NAMESPACE)
        .withKubeVersion(MIN_KUBE_VERSION)
        .skipCrds().set("monitoring.podMonitor", true).set("monitoring.prometheusRule", true)
        .set("rbac.aggregatedRoles", false);
    for (String c : OperatorControllers.names()) {
      template.set("controllers." + c + ".enabled", c.equals(controller));
    }
    return split(template.call());
  }

  /** Splits {@code helm template} output by its {@code # Source:} comments, in order. */
  static Map<String, String> split(String rendered) {
    Map<String, StringBuilder> files = new LinkedHashMap<>();
    for (String doc : rendered.split("(?m)^---\\s*$")) {
      Matcher m = SOURCE.matcher(doc);
      if (!m.find()) {
        if (!doc.isBlank()) {
          throw new IllegalStateException("a rendered document without its template: " + doc);
        }
        continue;
      }
      String body = doc.substring(m.end()).strip();
      if (body.isEmpty()) {
        continue;
      }
      StringBuilder b = files.computeIfAbsent(m.group(1), k -> new StringBuilder());
      if (!b.isEmpty()) {
        b.append("---\n");
      }
      b.append(body).append('\n');
    }
    Map<String, String> out = new LinkedHashMap<>();
    files.forEach((k, v) -> out.put(k, v.toString()));
    return out;
  }
}
