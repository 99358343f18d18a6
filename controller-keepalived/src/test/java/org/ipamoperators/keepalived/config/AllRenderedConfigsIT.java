package org.ipamoperators.keepalived.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.ipamoperators.testsupport.keepalived.ConfigCheck;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every configuration the unit tests rendered (recorded by {@link RenderedConfigs} under
 * {@code target/rendered-configs}) passes the real {@code keepalived --config-test}: keepalived 2.2.7 exits
 * non-zero on any warning about the configuration, so "passes" means it had nothing to say.
 */
class AllRenderedConfigsIT {

  private static ConfigCheckNode checker;

  @BeforeAll
  static void start() {
    checker = new ConfigCheckNode();
  }

  @AfterAll
  static void stop() {
    if (checker != null) {
      checker.close();
    }
  }

  @Test
  void theUnitTestsRenderedConfigurations() {
    assertThat(RenderedConfigs.recorded())
        .as("no rendered configuration under %s: the unit tests (surefire) record them; run mvn verify",
            RenderedConfigs.directory())
        .hasSizeGreaterThanOrEqualTo(20);
  }

  @TestFactory
  Stream<DynamicTest> everyRenderedConfigurationPassesKeepalivedsConfigTest() {
    List<Path> files = RenderedConfigs.recorded();
    return files.stream().map(file -> DynamicTest.dynamicTest(
        RenderedConfigs.directory().relativize(file).toString(), file.toUri(), () -> {
          String config = Files.readString(file, StandardCharsets.UTF_8);
          ConfigCheck check = checker.check(config);
          assertThat(check.valid()).as("keepalived --config-test on %s (exit %d):%n%s", file, check.exitCode(),
              check.output()).isTrue();
        }));
  }

  @Test
  void theGoldenFilesArePartOfIt() throws IOException {
    try (Stream<Path> golden = Files.list(Path.of("src", "test", "resources", "golden"))) {
      for (Path file : golden.toList()) {
        ConfigCheck check = checker.check(Files.readString(file, StandardCharsets.UTF_8));
        assertThat(check.valid()).as("%s:%n%s", file, check.output()).isTrue();
      }
    }
  }
}
