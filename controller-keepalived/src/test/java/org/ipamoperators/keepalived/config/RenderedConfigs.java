package org.ipamoperators.keepalived.config;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Every configuration the tests render goes through here and is kept under {@code target/rendered-configs}, where
 * {@code AllRenderedConfigsIT} runs each one through the real {@code keepalived --config-test}. Tests must render
 * with {@link #render} (never {@link KeepalivedConfigRenderer} directly) so that no rendered configuration escapes
 * that check.
 */
public final class RenderedConfigs {

  /** System property naming the directory (set by the pom for surefire and failsafe). */
  public static final String DIRECTORY_PROPERTY = "ipam.keepalived.renderedConfigs";

  private static final Pattern INTERFACE = Pattern.compile("(?m)^\\s+interface (\\S+)$");
  private static final Pattern UNSAFE = Pattern.compile("[^A-Za-z0-9_.-]");

  private RenderedConfigs() {
  }

  /** Renders {@code node}'s configuration and records it as {@code <label>-<node>.conf} of {@code testClass}. */
  public static RenderedConfig render(Class<?> testClass, String label, KeepalivedGroupModel model, String node) {
    RenderedConfig config = KeepalivedConfigRenderer.render(model, node);
    record(testClass, label + "-" + node, config.text());
    return config;
  }

  /** Renders every node's configuration, recording each. */
  public static List<RenderedConfig> renderAll(Class<?> testClass, String label, KeepalivedGroupModel model) {
    return model.nodes().stream().map(n -> render(testClass, label, model, n.name())).toList();
  }

  /** Records configuration text rendered elsewhere (e.g. the failover tests). */
  public static void record(Class<?> testClass, String name, String text) {
    Path file = directory().resolve(testClass.getSimpleName()).resolve(UNSAFE.matcher(name).replaceAll("_") + ".conf");
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot record a rendered configuration at " + file, e);
    }
  }

  /** The recording directory. */
  public static Path directory() {
    return Path.of(System.getProperty(DIRECTORY_PROPERTY, Path.of("target", "rendered-configs").toString()));
  }

  /** Every recorded configuration, sorted by path. */
  public static List<Path> recorded() {
    Path dir = directory();
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(f -> f.toString().endsWith(".conf")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + dir, e);
    }
  }

  /** The interface names a configuration's instances run on. */
  public static List<String> interfaces(String text) {
    Matcher m = INTERFACE.matcher(text);
    return m.results().map(r -> r.group(1)).distinct().sorted().toList();
  }
}
