package org.ipamoperators.cli.operator;

import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NodeNetwork provider jars dropped into a directory: a provider for another cloud needs no rebuilt
 * image, only its jar (and the jars it needs that the operator lacks) in that directory. Each jar
 * registers its provider for {@link java.util.ServiceLoader} as on the class path.
 */
final class ProviderJars {
  /** The environment variable naming the directory; the egressip image sets it. */
  static final String ENV = "IPAM_PROVIDER_DIR";

  private static final Logger LOG = LoggerFactory.getLogger(ProviderJars.class);

  private ProviderJars() {}

  /**
   * The class loader the providers are found with.
   *
   * @param option the directory given by {@code --provider-dir}, or null
   * @param env the directory {@value #ENV} names, or null
   * @return the operator's own class loader when no directory is set or the one from the environment
   *     does not exist (an image without extra providers); else a loader over the directory's jars
   * @throws IllegalArgumentException when {@code --provider-dir} names no directory, or a jar cannot be read
   */
  static ClassLoader loader(Path option, String env) {
    ClassLoader own = ProviderJars.class.getClassLoader();
    Path dir = option != null ? option : env == null || env.isBlank() ? null : Path.of(env.trim());
    if (dir == null) {
      return own;
    }
    String source = option != null ? "--provider-dir " : ENV + "=";
    if (!Files.isDirectory(dir)) {
      if (option != null || Files.exists(dir)) {
        throw new IllegalArgumentException(source + dir + " is not a directory");
      }
      return own;
    }
    List<Path> jars = jars(dir, source);
    LOG.info("NodeNetwork provider jars in {}: {}", dir, jars.stream().map(p -> p.getFileName().toString()).toList());
    if (jars.isEmpty()) {
      return own;
    }
    List<URL> urls = new ArrayList<>();
    for (Path jar : jars) {
      try {
        urls.add(jar.toUri().toURL());
      } catch (MalformedURLException e) {
        throw new IllegalArgumentException("provider jar " + jar + ": " + e.getMessage(), e);
      }
    }
    return new URLClassLoader("ipam-providers", urls.toArray(URL[]::new), own);
  }

  /** The directory's jars, in name order so that the same directory always loads the same way. */
  static List<Path> jars(Path dir, String source) {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().endsWith(".jar") && Files.isRegularFile(p)).sorted()
          .toList();
    } catch (IOException e) {
      throw new IllegalArgumentException(source + dir + " cannot be read: " + e.getMessage(), e);
    }
  }
}
