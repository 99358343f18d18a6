package org.ipamoperators.cli;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Renders the plain manifests of {@code target/kubernetes/<controller>/} from the Helm chart, so the
 * chart is the one source of every object we ship: {@code helm template ipam} with one controller
 * enabled and monitoring on, each template's output in a file named after the template.
 *
 * <p>A build step, not a test: the build runs it after the test classes are compiled (helm-java and
 * its native Helm library are test dependencies, kept out of {@code ipam.jar}). It also packages the
 * chart as {@code target/helm/ipam-operators-<version>.tgz}.
 */
public final class ChartManifests {
  static final String RELEASE = "ipam";
  /** The oldest Kubernetes the chart supports (Chart.yaml kubeVersion): CEL rules in CRDs are GA from 1.29. */
  static final String MIN_KUBE_VERSION = "1.29.0";
  private static final Pattern SOURCE = Pattern.compile("^# Source: [^/]+/templates/(.+)$", Pattern.MULTILINE);

  private ChartManifests() {
  }

  /** Arguments: the chart directory, the output directory, the namespace manifest. */
  public static void main(String[] args) throws IOException {
    if (args.length != 3) {
      throw new IllegalArgumentException("usage: ChartManifests CHART_DIR OUTPUT_DIR NAMESPACE_YAML");
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
    new Helm(chart).packageIt().withDestination(chart.getParent()).call();
  }

  /** The chart's objects for one controller, in the namespace {@code ipam-operators}, by file name. */
  static Map<String, String> render(Path chart, String controller) {
    TemplateCommand template = new Helm(chart).template().withName(RELEASE).withNamespace(Manifests.NAMESPACE)
        .withKubeVersion(MIN_KUBE_VERSION)
        .skipCrds().set("monitoring.podMonitor", true).set("monitoring.prometheusRule", true);
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
