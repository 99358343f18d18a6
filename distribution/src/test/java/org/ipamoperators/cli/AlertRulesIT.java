package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.testsupport.CommandResult;
import org.ipamoperators.testsupport.Commands;
import org.ipamoperators.testsupport.TestBinaries;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The chart's alerts evaluated by Prometheus' own rule engine: {@code promtool test rules} runs
 * {@code alerts/<controller>-test.yaml} (firing and quiet series for every alert, the annotations as
 * rendered) against the PrometheusRule the chart renders. Every alert must have a case where it
 * fires and one where it stays quiet, and each case must bite: the run fails once the alert's
 * expression is replaced by one that never fires, or by one that always does.
 */
class AlertRulesIT {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final String NEVER = "vector(0) > 1";
  private static final String ALWAYS = "vector(1)";

  @ParameterizedTest
  @ValueSource(strings = {"egressip", "vip", "keepalived", "eip"})
  void everyAlertFiresOnItsSeriesAndStaysQuietOnTheOthers(String controller, @TempDir Path dir) throws IOException {
    Path promtool = TestBinaries.fromEnvironment().promtool();
    List<Map<String, Object>> groups = groups(controller);
    Path tests = dir.resolve(controller + "-test.yaml");
    try (InputStream in = AlertRulesIT.class.getResourceAsStream("/alerts/" + controller + "-test.yaml")) {
      assertThat(in).as("alerts/%s-test.yaml", controller).isNotNull();
      Files.copy(in, tests);
    }
    Path rules = dir.resolve(controller + ".rules.yaml");
    write(rules, groups, null, null);

    CommandResult check = Commands.run(promtool.toString(), "check", "rules", rules.toString());
    assertThat(check.succeeded()).as("promtool check rules: %s", check.output()).isTrue();
    CommandResult test = Commands.run(promtool.toString(), "test", "rules", tests.toString());
    assertThat(test.succeeded()).as("promtool test rules: %s", test.output()).isTrue();

    Set<String> alerts = alertNames(groups);
    assertThat(alerts).isNotEmpty();
    Map<String, Set<Boolean>> cases = cases(tests);
    for (String alert : alerts) {
      assertThat(cases.getOrDefault(alert, Set.of())).as("%s: a firing and a quiet case", alert)
          .containsExactlyInAnyOrder(true, false);
      for (String replacement : List.of(NEVER, ALWAYS)) {
        write(rules, groups, alert, replacement);
        CommandResult broken = Commands.run(promtool.toString(), "test", "rules", tests.toString());
        assertThat(broken.succeeded()).as("%s with expr '%s' must fail its cases", alert, replacement).isFalse();
      }
    }
  }

  private static List<Map<String, Object>> groups(String controller) {
    GenericKubernetesResource rule =
        (GenericKubernetesResource) Manifests.byKind(Manifests.objects(controller), "PrometheusRule");
    return rule.get("spec", "groups");
  }

  /** The rule file, with one alert's expression replaced when {@code alert} is set. */
  @SuppressWarnings("unchecked")
  private static void write(Path file, List<Map<String, Object>> groups, String alert, String expr)
      throws IOException {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Map<String, Object> g : groups) {
      Map<String, Object> group = new LinkedHashMap<>(g);
      List<Map<String, Object>> rules = new ArrayList<>();
      for (Map<String, Object> r : (List<Map<String, Object>>) g.get("rules")) {
        Map<String, Object> rule = new LinkedHashMap<>(r);
        if (alert != null && alert.equals(rule.get("alert"))) {
          rule.put("expr", expr);
        }
        rules.add(rule);
      }
      group.put("rules", rules);
      out.add(group);
    }
    YAML.writeValue(file.toFile(), Map.of("groups", out));
  }

  @SuppressWarnings("unchecked")
  private static Set<String> alertNames(List<Map<String, Object>> groups) {
    Set<String> names = new LinkedHashSet<>();
    groups.forEach(g -> ((List<Map<String, Object>>) g.get("rules")).stream()
        .map(r -> (String) r.get("alert")).filter(a -> a != null).forEach(names::add));
    return names;
  }

  /** Per alert name: whether the file has a case where it fires (true) and one where it is quiet (false). */
  @SuppressWarnings("unchecked")
  private static Map<String, Set<Boolean>> cases(Path tests) throws IOException {
    Map<String, Object> file = YAML.readValue(tests.toFile(), Map.class);
    Map<String, Set<Boolean>> out = new LinkedHashMap<>();
    for (Map<String, Object> test : (List<Map<String, Object>>) file.get("tests")) {
      for (Map<String, Object> c : (List<Map<String, Object>>) test.get("alert_rule_test")) {
        List<?> expected = (List<?>) c.get("exp_alerts");
        out.computeIfAbsent((String) c.get("alertname"), k -> new LinkedHashSet<>())
            .add(expected != null && !expected.isEmpty());
      }
    }
    return out;
  }
}
