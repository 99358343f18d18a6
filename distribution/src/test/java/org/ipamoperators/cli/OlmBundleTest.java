package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.DeploymentSpec;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.ipamoperators.cli.operator.OperatorControllers;
import org.junit.jupiter.api.Test;

/**
 * The parts of the OLM bundle's ClusterServiceVersion that need no apiserver: {@code relatedImages} lists every
 * image its Deployments run or hand on, and the icon is the chart's. (OlmBundleIT checks the rest.)
 */
class OlmBundleTest {
  private static final Path CSV = Path.of("target", "olm", "bundle", "manifests",
      "ipam-operators.clusterserviceversion.yaml");

  @Test
  @SuppressWarnings("unchecked")
  void relatedImagesListEveryImageTheDeploymentsUseOnce() throws Exception {
    Map<String, Object> spec = (Map<String, Object>) csv().get("spec");
    List<Map<String, Object>> deployments = (List<Map<String, Object>>) ((Map<String, Object>) ((Map<String, Object>)
        spec.get("install")).get("spec")).get("deployments");
    Set<String> used = new TreeSet<>();
    KubernetesSerialization serialization = new KubernetesSerialization();
    for (Map<String, Object> d : deployments) {
      var pod = serialization.convertValue(d.get("spec"), DeploymentSpec.class).getTemplate().getSpec();
      List<Container> containers = new ArrayList<>(pod.getContainers());
      containers.addAll(pod.getInitContainers());
      for (Container c : containers) {
        used.add(c.getImage());
        c.getEnv().stream().filter(e -> e.getName().endsWith("_IMAGE")).forEach(e -> used.add(e.getValue()));
      }
    }
    String version = ChartManifests.chartVersion(HelmChartTest.CHART);
    // Every controller's own image, as the chart names it.
    assertThat(used).isEqualTo(OperatorControllers.names().stream().map(c -> "ipam-operators/" + c + ":" + version)
        .collect(Collectors.toCollection(TreeSet::new)));
    List<Map<String, String>> related = (List<Map<String, String>>) spec.get("relatedImages");
    assertThat(related).extracting(r -> r.get("image")).doesNotHaveDuplicates()
        .containsExactlyInAnyOrderElementsOf(used);
    assertThat(related).extracting(r -> r.get("name")).doesNotHaveDuplicates()
        .containsExactlyInAnyOrderElementsOf(OperatorControllers.names());
    assertThat(related).allSatisfy(r -> assertThat(r.get("image")).endsWith("/" + r.get("name") + ":" + version));
  }

  @Test
  @SuppressWarnings("unchecked")
  void theIconIsTheChartsSvg() throws Exception {
    List<Map<String, String>> icons = (List<Map<String, String>>) ((Map<String, Object>) csv().get("spec")).get("icon");
    String chartIcon = ChartManifests.chartMeta(HelmChartTest.CHART).get("icon").toString();
    assertThat(icons).singleElement().satisfies(icon -> {
      assertThat(icon.get("mediatype")).isEqualTo("image/svg+xml");
      assertThat(chartIcon).isEqualTo("data:image/svg+xml;base64," + icon.get("base64data"));
      String svg = new String(Base64.getDecoder().decode(icon.get("base64data")), StandardCharsets.UTF_8);
      assertThat(svg).startsWith("<svg xmlns=\"http://www.w3.org/2000/svg\"").endsWith("</svg>")
          .doesNotContain("href");
    });
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> csv() throws Exception {
    return new ObjectMapper(new YAMLFactory()).readValue(CSV.toFile(), Map.class);
  }
}
