package org.ipamoperators.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DemoOnNodeTest {
  @TempDir
  Path dir;

  @Test
  void namesTheFirstMissingImageThenTheChartWithTheCommandThatBuildsThem() throws Exception {
    Path images = Files.createDirectories(dir.resolve("images"));
    Path chart = Files.createDirectories(dir.resolve("chart"));
    assertThat(DemoOnNode.missingBuildOutput(images, chart)).hasValueSatisfying(m -> assertThat(m)
        .contains("controller images (missing: " + images.resolve("egressip.tar") + ")")
        .endsWith(DemoOnNode.BUILD_IMAGES));
    for (String c : DemoOnNode.CONTROLLERS) {
      Files.writeString(images.resolve(c + ".tar"), "");
    }
    Files.delete(images.resolve("vip.tar"));
    assertThat(DemoOnNode.missingBuildOutput(images, chart))
        .hasValueSatisfying(m -> assertThat(m).contains("(missing: " + images.resolve("vip.tar") + ")"));
    Files.writeString(images.resolve("vip.tar"), "");
    assertThat(DemoOnNode.missingBuildOutput(images, chart)).hasValueSatisfying(m -> assertThat(m)
        .contains("built Helm chart (missing: " + chart.resolve("Chart.yaml") + ")").endsWith(DemoOnNode.BUILD_IMAGES));
    Files.writeString(chart.resolve("Chart.yaml"), "name: ipam-operators\n");
    assertThat(DemoOnNode.missingBuildOutput(images, chart)).isEmpty();
  }
}
