package org.ipamoperators.cli.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.ipamoperators.cli.IpamRun;
import org.ipamoperators.core.spi.NodeNetworkProvider;
import org.ipamoperators.egressip.cloud.CloudNodeNetworks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Provider jars from a directory: the example provider of {@code examples/custom-provider}, compiled
 * from its sources into a jar here, is found beside the built-in providers once its directory is given,
 * and serves the platform it names; a directory that is not there is refused when given as an option.
 */
public class ProviderJarsTest {
  private static final Path EXAMPLE = Path.of("..", "examples", "custom-provider", "src", "main");

  @Test
  void theExampleProvidersJarInTheDirectoryIsFoundAndServesItsPlatform(@TempDir Path dir) throws Exception {
    Path providers = Files.createDirectories(dir.resolve("providers"));
    jar(dir.resolve("classes"), providers.resolve("fictional-cloud-provider.jar"));

    assertThat(names(CloudNodeNetworks.discover(ProviderJars.loader(null, null))))
        .as("the class path alone").contains("baremetal").doesNotContain("fictional");
    for (ClassLoader loader : List.of(ProviderJars.loader(providers, null),
        ProviderJars.loader(null, providers.toString()))) {
      List<NodeNetworkProvider> found = CloudNodeNetworks.discover(loader);
      assertThat(names(found)).contains("baremetal", "fictional");
      NodeNetworkProvider fictional = found.stream().filter(p -> p.name().equals("fictional")).findFirst()
          .orElseThrow();
      assertThat(fictional.platforms()).containsExactly("Fictional");
      assertThat(fictional.getClass().getClassLoader()).isSameAs(loader);
    }
  }

  @Test
  void aMissingDirectoryIsRefusedAsAnOptionAndMeansNoExtraProvidersFromTheImagesVariable(@TempDir Path dir)
      throws IOException {
    Path missing = dir.resolve("none");
    assertThatThrownBy(() -> ProviderJars.loader(missing, null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--provider-dir " + missing + " is not a directory");
    assertThat(ProviderJars.loader(null, missing.toString())).isSameAs(ProviderJars.class.getClassLoader());
    Path file = Files.writeString(dir.resolve("file"), "x");
    assertThatThrownBy(() -> ProviderJars.loader(null, file.toString())).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("IPAM_PROVIDER_DIR=" + file + " is not a directory");
    Path empty = Files.createDirectories(dir.resolve("empty"));
    assertThat(ProviderJars.loader(empty, null)).isSameAs(ProviderJars.class.getClassLoader());
  }

  @Test
  void theOperatorStopsAtOnceOnAProviderDirectoryThatIsNotThere(@TempDir Path dir) {
    IpamRun run = IpamRun.of("operator", "--controllers", "egressip", "--provider-dir",
        dir.resolve("none").toString());
    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.err()).isEqualTo("ipam operator: --provider-dir " + dir.resolve("none") + " is not a directory\n");
  }

  private static List<String> names(List<NodeNetworkProvider> providers) {
    return providers.stream().map(NodeNetworkProvider::name).toList();
  }

  /** The example's main sources compiled against this class path, with its resources, as one jar. */
  public static void jar(Path classes, Path jar) throws IOException {
    List<String> sources;
    try (Stream<Path> files = Files.walk(EXAMPLE.resolve("java"))) {
      sources = files.filter(p -> p.toString().endsWith(".java")).map(Path::toString).toList();
    }
    assertThat(sources).isNotEmpty();
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    List<String> args = new ArrayList<>(List.of("--release", "17", "-d", classes.toString(),
        "-cp", System.getProperty("java.class.path")));
    args.addAll(sources);
    assertThat(javac.run(null, null, null, args.toArray(String[]::new))).as("javac").isZero();
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
      add(out, classes);
      add(out, EXAMPLE.resolve("resources"));
    }
  }

  private static void add(JarOutputStream out, Path root) throws IOException {
    List<Path> files;
    try (Stream<Path> walk = Files.walk(root)) {
      files = walk.filter(Files::isRegularFile).sorted().toList();
    }
    for (Path f : files) {
      out.putNextEntry(new JarEntry(root.relativize(f).toString().replace('\\', '/')));
      Files.copy(f, out);
      out.closeEntry();
    }
  }
}
