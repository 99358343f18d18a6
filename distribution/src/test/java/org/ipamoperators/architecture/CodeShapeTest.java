package org.ipamoperators.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The main code of every product module keeps the shape docs/architecture.md describes: methods under
 * {@value CodeShape#MAX_METHOD_LINES} lines, reconcilers under {@value CodeShape#MAX_RECONCILER_LINES}, no static
 * mutable state, decision packages without I/O libraries. Prints the longest methods and largest files.
 */
class CodeShapeTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  /** Product modules; test-support and examples are not shipped. */
  private static final List<String> MODULES = List.of("ipam-core", "controller-common", "controller-egressip",
      "controller-vip", "controller-keepalived", "controller-eip", "cloud-aws", "cloud-azure", "cloud-baremetal",
      "distribution");
  private static List<CodeShape> sources;

  @BeforeAll
  static void parseMainCode() throws IOException {
    sources = MODULES.stream().flatMap(CodeShapeTest::javaFiles)
        .map(p -> CodeShape.parse(ROOT.relativize(p).toString(), read(p))).toList();
    assertThat(sources).as("main sources found under " + ROOT).hasSizeGreaterThan(300);
  }

  @Test
  void noMethodIsLongerThanSixtyLines() {
    List<CodeShape.Method> all = sources.stream().flatMap(s -> s.methods().stream())
        .sorted(Comparator.comparingInt(CodeShape.Method::lines).reversed()).toList();
    System.out.println("longest methods: " + all.stream().limit(8)
        .map(m -> m.file().replaceAll(".*/", "") + "#" + m.name() + " " + m.lines()).collect(Collectors.joining(", ")));
    assertThat(all).hasSizeGreaterThan(1000)
        .filteredOn(m -> m.lines() > CodeShape.MAX_METHOD_LINES).isEmpty();
  }

  @Test
  void noReconcilerIsLongerThanFourHundredFiftyLines() {
    List<CodeShape> reconcilers = sources.stream().filter(CodeShape::isReconciler)
        .sorted(Comparator.comparingInt(CodeShape::lines).reversed()).toList();
    System.out.println("largest reconcilers: " + reconcilers.stream().limit(6)
        .map(s -> s.file().replaceAll(".*/", "") + " " + s.lines())
        .collect(Collectors.joining(", ")));
    assertThat(reconcilers).as("reconcilers found").hasSizeGreaterThanOrEqualTo(6)
        .filteredOn(s -> s.lines() > CodeShape.MAX_RECONCILER_LINES).isEmpty();
  }

  @Test
  void noStaticFieldHoldsMutableState() {
    assertThat(sources.stream().flatMap(s -> s.staticMutableState().stream())).isEmpty();
  }

  @Test
  void decisionPackagesImportNoIoLibrary() {
    // distribution's cli.plan is the `ipam plan` command, which reads the cluster; the controllers' plan/ decide.
    List<CodeShape> pure = sources.stream().filter(s -> s.packageName().startsWith("org.ipamoperators.core")
        || !s.packageName().startsWith("org.ipamoperators.cli")
        && s.packageName().matches(".*\\.(plan|config)(\\..*)?")).toList();
    assertThat(pure).as("decision packages found").hasSizeGreaterThan(100);
    assertThat(pure.stream().flatMap(s -> s.ioImports().stream())).isEmpty();
  }

  @Test
  void theChecksSeeWhatTheyForbid() {
    String body = "    x++;\n".repeat(CodeShape.MAX_METHOD_LINES - 1);
    CodeShape bad = CodeShape.parse("Bad.java", """
        package org.ipamoperators.egressip.plan;
        import io.fabric8.kubernetes.client.KubernetesClient;
        import io.fabric8.kubernetes.api.model.LabelSelector;
        import java.util.HashMap;
        class BadReconciler {
          private static final java.util.Map<String, String> CACHE = new HashMap<>();
          private static final int[] COUNTS = {1, 2};
          private static int calls;
          private static final java.util.Set<String> SEEN = java.util.concurrent.ConcurrentHashMap.newKeySet();
          private static final String NAME = "fine";
          private static final java.util.List<String> NAMES = java.util.List.of("fine");
          void tooLong(int x) {
        """ + body + "  }\n  void fine() {\n  }\n}\n");
    assertThat(bad.methods()).extracting(CodeShape.Method::name, CodeShape.Method::lines)
        .contains(org.assertj.core.groups.Tuple.tuple("tooLong", CodeShape.MAX_METHOD_LINES + 1),
            org.assertj.core.groups.Tuple.tuple("fine", 2));
    assertThat(bad.staticMutableState()).hasSize(4).allMatch(s -> s.matches("Bad.java:\\d+ (CACHE|COUNTS|calls|SEEN) .*"));
    assertThat(bad.ioImports()).containsExactly("Bad.java imports io.fabric8.kubernetes.client.KubernetesClient");
    assertThat(bad.isReconciler()).isTrue();

    CodeShape record = CodeShape.parse("R.java", """
        record R(int a) {
          R {
            if (a < 0) throw new IllegalArgumentException();
          }
        }
        """);
    assertThat(record.methods()).extracting(CodeShape.Method::lines).containsExactly(3);
    assertThat(record.isReconciler()).isFalse();
  }

  private static Stream<Path> javaFiles(String module) {
    Path main = ROOT.resolve(module).resolve("src/main/java");
    try (Stream<Path> walk = Files.walk(main)) {
      return walk.filter(p -> p.toString().endsWith(".java")).toList().stream();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String read(Path p) {
    try {
      return Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
