package org.ipamoperators.keepalived.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Expected configurations under {@code src/test/resources/golden/}. {@code -Dgolden.update=true} rewrites them
 * from the current output instead of comparing (review the diff before committing it).
 */
final class Golden {

  private static final Path DIR = Path.of("src", "test", "resources", "golden");

  private Golden() {
  }

  static void assertMatches(String name, String actual) {
    Path file = DIR.resolve(name + ".conf");
    try {
      if (Boolean.getBoolean("golden.update")) {
        Files.createDirectories(DIR);
        Files.writeString(file, actual, StandardCharsets.UTF_8);
        return;
      }
      assertThat(Files.exists(file))
          .as("golden file %s is missing; create it with -Dgolden.update=true and review it", file)
          .isTrue();
      assertThat(actual).as("rendered configuration vs %s (-Dgolden.update=true rewrites it)", file)
          .isEqualTo(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
