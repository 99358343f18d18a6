package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.ipamoperators.cli.ExportedMetrics.Metric;
import org.ipamoperators.cli.ExportedMetrics.Source;
import org.junit.jupiter.api.Test;

/**
 * docs/metrics.md is rendered from {@link ExportedMetrics}, the table the manifest ITs check against live scrapes,
 * with the chart's alerts and dashboards that read each metric: a metric added, renamed or described anew without
 * regenerating the page fails here, and says how to regenerate it.
 */
class MetricsReferenceTest {
  static final Path PAGE = Path.of("..", "docs", "metrics.md");
  static final String WRITE = "ipam.metrics.write";
  private static final Path CHART = Path.of("src", "main", "helm", "ipam-operators");
  private static final Pattern ALERT = Pattern.compile("^\\s*- alert: (\\w+)\\s*$");
  private static final Pattern AFTER_EXPR = Pattern.compile("^\\s*(for|labels|annotations|- alert):.*");

  @Test
  void theReferenceIsWhatTheTableRenders() throws IOException {
    String rendered = render(alerts(), dashboards());
    if (Boolean.getBoolean(WRITE)) {
      Files.writeString(PAGE, rendered, StandardCharsets.UTF_8);
    }
    String onDisk = Files.exists(PAGE) ? Files.readString(PAGE, StandardCharsets.UTF_8) : "";
    assertThat(onDisk).as("docs/metrics.md is stale or missing (%s); regenerate it from ExportedMetrics with: mvn -pl"
        + " distribution test -Dtest=MetricsReferenceTest -D" + WRITE + "=true", firstDifference(onDisk, rendered))
        .isEqualTo(rendered);
  }

  private static String firstDifference(String onDisk, String rendered) {
    List<String> a = onDisk.lines().toList();
    List<String> b = rendered.lines().toList();
    for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
      String was = i < a.size() ? a.get(i) : "(end of file)";
      String is = i < b.size() ? b.get(i) : "(end of file)";
      if (!was.equals(is)) {
        return "line " + (i + 1) + " is \"" + was + "\", the table renders \"" + is + "\"";
      }
    }
    return "line endings differ";
  }

  @Test
  void everyAlertAndDashboardPanelReadsAMetricOfTheTable() throws IOException {
    List<String> names = allSeries();
    assertThat(alerts()).isNotEmpty().allSatisfy((alert, expr) ->
        assertThat(names).as("alert %s reads a metric of the table: %s", alert, expr).anyMatch(n -> reads(expr, n)));
    assertThat(dashboards()).isNotEmpty().allSatisfy((panel, expr) ->
        assertThat(names).as("panel %s reads a metric of the table: %s", panel, expr).anyMatch(n -> reads(expr, n)));
  }

  @Test
  void everyAliasNamesAMetricOfItsSectionWithTheSameLabels() {
    for (Source s : ExportedMetrics.SOURCES) {
      s.metrics().stream().filter(m -> m.aliasOf() != null).forEach(alias ->
          assertThat(s.metrics()).as("%s is an alias of %s", alias.name(), alias.aliasOf())
              .anySatisfy(m -> {
                assertThat(m.name()).isEqualTo(alias.aliasOf());
                assertThat(m.labels()).isEqualTo(alias.labels());
              }));
    }
  }

  static String render(Map<String, String> alerts, Map<String, String> panels) {
    StringBuilder md = new StringBuilder("""
        # Metrics reference

        Every series the controllers export, by the name a Prometheus scrape shows. Counters end in `_total`; a
        timer `x` is served as `x_seconds_count`, `x_seconds_sum` and `x_seconds_max` (a histogram adds
        `x_seconds_bucket`). The labels listed are the controller's own: Prometheus adds the target's (`namespace`,
        `pod`, ... as the chart's PodMonitor or ServiceMonitor sets them). Series marked "(after an event)" appear
        only once it happened (a counter's first increment, an audit's first run). Each operator process also
        serves java-operator-sdk's series (`operator_sdk_*`) and Micrometer's JVM, process and uptime series
        (`jvm_*`, `process_*`, `system_*`), not listed here.
        The last column names the chart's alerts (PrometheusRule, `monitoring.prometheusRule`) and Grafana
        dashboard panels (`monitoring.grafanaDashboards`) that read the metric.

        This page is generated from the table the tests check against live scrapes of each running controller
        (`distribution/src/test/java/org/ipamoperators/cli/ExportedMetrics.java`); `MetricsReferenceTest` fails
        when it differs. To regenerate it after changing the table:
        `mvn -pl distribution test -Dtest=MetricsReferenceTest -Dipam.metrics.write=true`.
        """);
    for (Source s : ExportedMetrics.SOURCES) {
      md.append("\n## ").append(s.title()).append("\n\nServed by ").append(s.where()).append(".\n\n")
          .append("| metric | type | labels | meaning | read by |\n|---|---|---|---|---|\n");
      for (Metric m : s.metrics()) {
        md.append("| `").append(m.name()).append("` | ").append(m.type()).append(" | ")
            .append(m.labels().isEmpty() ? "–" : m.labels().stream().map(l -> "`" + l + "`")
                .collect(Collectors.joining(", ")))
            .append(" | ").append(m.meaning()).append(m.afterAnEvent() ? " (after an event)" : "").append(" | ")
            .append(readBy(m, alerts, panels)).append(" |\n");
      }
    }
    md.append("\n## Old names kept as aliases\n\nServed beside the new names with the same labels and values, so"
        + " alerts and dashboards written for the operators this suite replaces keep working:\n\n"
        + "| old name | new name |\n|---|---|\n");
    ExportedMetrics.SOURCES.stream().flatMap(s -> s.metrics().stream()).filter(m -> m.aliasOf() != null)
        .forEach(m -> md.append("| `").append(m.name()).append("` | `").append(m.aliasOf()).append("` |\n"));
    return md.toString();
  }

  private static String readBy(Metric m, Map<String, String> alerts, Map<String, String> panels) {
    List<String> by = new ArrayList<>();
    alerts.forEach((alert, expr) -> {
      if (m.series().stream().anyMatch(n -> reads(expr, n))) {
        by.add("alert `" + alert + "`");
      }
    });
    panels.forEach((panel, expr) -> {
      if (m.series().stream().anyMatch(n -> reads(expr, n))) {
        by.add(panel);
      }
    });
    return by.isEmpty() ? "–" : String.join("; ", by);
  }

  private static boolean reads(String expr, String series) {
    return Pattern.compile("(?<![A-Za-z0-9_:])" + Pattern.quote(series) + "(?![A-Za-z0-9_:])").matcher(expr).find();
  }

  private static List<String> allSeries() {
    return ExportedMetrics.SOURCES.stream().flatMap(s -> s.metrics().stream()).flatMap(m -> m.series().stream())
        .toList();
  }

  /** Each alert of the chart's PrometheusRule template and its expression, in file order. */
  static Map<String, String> alerts() throws IOException {
    Map<String, String> out = new LinkedHashMap<>();
    String alert = null;
    StringBuilder expr = null;
    for (String line : Files.readAllLines(CHART.resolve("templates/monitoring/prometheusrule.yaml"))) {
      Matcher m = ALERT.matcher(line);
      if (m.matches()) {
        alert = m.group(1);
        expr = null;
      } else if (alert != null && line.trim().startsWith("expr:")) {
        expr = new StringBuilder(line.trim().substring("expr:".length()));
      } else if (expr != null && (AFTER_EXPR.matcher(line).matches() || line.startsWith("{{"))) {
        out.put(alert, expr.toString().trim());
        expr = null;
      } else if (expr != null) {
        expr.append(' ').append(line.trim());
      }
    }
    return out;
  }

  /** Each Grafana panel of the chart ("dashboard: panel title") and its queries joined. */
  static Map<String, String> dashboards() throws IOException {
    ObjectMapper json = new ObjectMapper();
    Map<String, String> out = new LinkedHashMap<>();
    try (Stream<Path> files = Files.list(CHART.resolve("dashboards"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
        String dashboard = f.getFileName().toString().replaceFirst("\\.json$", "");
        for (JsonNode panel : json.readTree(f.toFile()).path("panels")) {
          List<String> exprs = new ArrayList<>();
          panel.path("targets").forEach(t -> exprs.add(t.path("expr").asText()));
          out.put(dashboard + " dashboard: " + panel.path("title").asText(), String.join(" ", exprs));
        }
      }
    }
    return out;
  }
}
