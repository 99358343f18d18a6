package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.cli.operator.OperatorControllers;
import org.ipamoperators.testsupport.CommandResult;
import org.ipamoperators.testsupport.Commands;
import org.ipamoperators.testsupport.TestBinaries;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's Grafana dashboards: one ConfigMap per enabled controller, labelled for Grafana's
 * sidecar, each panel's query valid PromQL (checked by promtool, Prometheus' own parser) and reading
 * only the series the controllers export ({@link ExportedMetrics}, checked against live scrapes by
 * the manifest ITs).
 */
class DashboardsIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Pattern NAME = Pattern.compile("\\b(ipam_[a-z0-9_]+)\\b");

  @Test
  void eachControllerGetsADashboardWhoseQueriesPrometheusAccepts(@TempDir Path dir) throws Exception {
    TemplateCommand template = HelmChartTest.template().set("monitoring.grafanaDashboards.enabled", true)
        .set("monitoring.grafanaDashboards.annotations.grafana_folder", "ipam");
    OperatorControllers.names().forEach(c -> template.set("controllers." + c + ".enabled", true));
    List<ConfigMap> maps = HelmChartTest.objects(template).stream().filter(o -> o instanceof ConfigMap)
        .map(o -> (ConfigMap) o).filter(m -> m.getMetadata().getName().endsWith("-dashboard")).toList();
    assertThat(maps).extracting(m -> m.getMetadata().getName())
        .containsExactlyInAnyOrderElementsOf(OperatorControllers.names().stream().map(c -> "test-" + c + "-dashboard")
            .toList());

    Map<String, Object> rules = new LinkedHashMap<>();
    List<Map<String, Object>> recorded = new ArrayList<>();
    Set<String> uids = new LinkedHashSet<>();
    for (ConfigMap m : maps) {
      String controller = m.getMetadata().getLabels().get("app.kubernetes.io/component");
      assertThat(m.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
      assertThat(m.getMetadata().getAnnotations()).containsEntry("grafana_folder", "ipam");
      assertThat(m.getData()).containsOnlyKeys("ipam-" + controller + ".json");
      JsonNode dashboard = JSON.readTree(m.getData().get("ipam-" + controller + ".json"));
      assertThat(uids.add(dashboard.get("uid").asText())).as("uid %s once", dashboard.get("uid")).isTrue();
      assertThat(dashboard.get("panels")).isNotEmpty();
      for (JsonNode panel : dashboard.get("panels")) {
        assertThat(panel.get("targets")).as("%s: %s", controller, panel.get("title")).isNotEmpty();
        for (JsonNode target : panel.get("targets")) {
          String expr = target.get("expr").asText();
          assertThat(names(expr)).as("%s %s: %s", controller, panel.get("title"), expr).isNotEmpty()
              .allSatisfy(n -> assertThat(ExportedMetrics.of(controller)).as("series exported for %s", controller)
                  .contains(n));
          recorded.add(Map.of("record", "dashboard:" + controller + ":" + panel.get("id").asInt() + "_"
              + target.get("refId").asText().toLowerCase(), "expr", expr));
        }
      }
    }
    rules.put("groups", List.of(Map.of("name", "dashboards", "rules", recorded)));
    Path file = dir.resolve("dashboards.rules.yaml");
    YAML.writeValue(file.toFile(), rules);
    CommandResult check = Commands.run(TestBinaries.fromEnvironment().promtool().toString(), "check", "rules",
        file.toString());
    assertThat(check.succeeded()).as("promtool check rules: %s", check.output()).isTrue();
    assertThat(check.output()).contains("SUCCESS: " + recorded.size() + " rules found");
  }

  @Test
  void noDashboardByDefault() {
    List<HasMetadata> objects = HelmChartTest.objects(HelmChartTest.template());
    assertThat(objects).noneMatch(o -> o.getMetadata().getName().endsWith("-dashboard"));
  }

  /** The series an expression reads (ours all start with ipam_), without PromQL's suffixes of one series. */
  static Set<String> names(String expr) {
    Set<String> out = new LinkedHashSet<>();
    Matcher m = NAME.matcher(expr);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }
}
