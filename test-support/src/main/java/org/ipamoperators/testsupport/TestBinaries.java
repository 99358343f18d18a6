package org.ipamoperators.testsupport;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.opentest4j.TestAbortedException;

/**
 * Locates the real binaries that {@code scripts/test-env.sh} prepares, from the environment variables it prints
 * or from its default cache directory.
 *
 * <p>A missing binary fails the test with a message that says how to install it. Local development may turn that
 * into an aborted (skipped) test with {@code -Dipam.test.allowMissingBinaries=true}; CI must never set it.
 */
public final class TestBinaries {

  /** System property that turns a missing binary into an aborted test instead of a failure. */
  public static final String ALLOW_MISSING_PROPERTY = "ipam.test.allowMissingBinaries";

  static final String SETUP_HINT =
      "Run scripts/test-env.sh from the repository root and export what it prints: eval \"$(scripts/test-env.sh)\"";

  private static final Pattern VERSION_DIR = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)-linux-amd64");

  private final Map<String, String> env;
  private final String userHome;

  TestBinaries(Map<String, String> env, String userHome) {
    this.env = Map.copyOf(env);
    this.userHome = userHome;
  }

  /** Resolution against this JVM's environment. */
  public static TestBinaries fromEnvironment() {
    return new TestBinaries(System.getenv(), System.getProperty("user.home"));
  }

  /** The cache {@code scripts/test-env.sh} fills: {@code $IPAM_TEST_CACHE}, else {@code $XDG_CACHE_HOME/ipam-operators}. */
  public Path cacheDir() {
    return env("IPAM_TEST_CACHE")
        .map(Path::of)
        .orElseGet(() -> env("XDG_CACHE_HOME").map(Path::of).orElse(Path.of(userHome, ".cache")).resolve("ipam-operators"));
  }

  /**
   * The directory holding {@code etcd}, {@code kube-apiserver} and {@code kubectl}, laid out as fabric8
   * kube-api-test expects: {@code $KUBE_API_TEST_DIR/k8s/<version>-linux-amd64}. The version comes from
   * {@code KUBE_API_TEST_API_SERVER_VERSION} (exact, or with a {@code *} wildcard); without it the highest
   * version present is used.
   */
  public Path kubernetesBinDir() {
    Path k8s = env("KUBE_API_TEST_DIR").map(Path::of).orElseGet(this::cacheDir).resolve("k8s");
    Optional<String> wanted = env("KUBE_API_TEST_API_SERVER_VERSION");
    List<Path> candidates;
    try (Stream<Path> dirs = Files.isDirectory(k8s) ? Files.list(k8s) : Stream.empty()) {
      candidates = dirs.filter(Files::isDirectory)
          .filter(d -> VERSION_DIR.matcher(d.getFileName().toString()).matches())
          .filter(d -> wanted.map(w -> versionMatches(w, d)).orElse(true))
          .sorted(Comparator.comparing(TestBinaries::versionKey).reversed())
          .toList();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("Cannot list " + k8s, e);
    }
    if (candidates.isEmpty()) {
      throw missing("kube-apiserver, etcd and kubectl",
          k8s.resolve(wanted.orElse("<version>") + "-linux-amd64"));
    }
    Path dir = candidates.get(0);
    for (String binary : List.of("etcd", "kube-apiserver", "kubectl")) {
      requireExecutable(binary, dir.resolve(binary));
    }
    return dir;
  }

  /** {@code moto_server}: {@code $IPAM_MOTO_SERVER}, else the virtualenv in the cache. */
  public Path motoServer() {
    Path path = env("IPAM_MOTO_SERVER").map(Path::of)
        .orElseGet(() -> cacheDir().resolve("moto-venv").resolve("bin").resolve("moto_server"));
    return requireExecutable("moto_server", path);
  }

  /** {@code keepalived}: {@code $IPAM_KEEPALIVED}, else the first one on PATH or in /usr/sbin and /sbin. */
  public Path keepalived() {
    return env("IPAM_KEEPALIVED").map(p -> requireExecutable("keepalived", Path.of(p)))
        .orElseGet(() -> requireOnPath("keepalived"));
  }

  /** {@code promtool}, Prometheus' rule checker: {@code $IPAM_PROMTOOL}, else the one in the cache. */
  public Path promtool() {
    Path path = env("IPAM_PROMTOOL").map(Path::of)
        .orElseGet(() -> cacheDir().resolve("prometheus").resolve("promtool"));
    return requireExecutable("promtool", path);
  }

  /** {@code ip} from iproute2, on PATH or in /usr/sbin and /sbin. */
  public Path ip() {
    return requireOnPath("ip");
  }

  Path requireOnPath(String name) {
    Stream<String> dirs = Stream.concat(
        Stream.of(env("PATH").orElse("").split(java.io.File.pathSeparator)), Stream.of("/usr/sbin", "/sbin"));
    return dirs.filter(d -> !d.isEmpty())
        .map(d -> Path.of(d, name))
        .filter(Files::isExecutable)
        .findFirst()
        .orElseThrow(() -> missing(name, Path.of(name + " on PATH")));
  }

  Path requireExecutable(String what, Path path) {
    if (!Files.isExecutable(path)) {
      throw missing(what, path);
    }
    return path;
  }

  /** The exception for a binary that is not there: a failure, or an abort if {@link #ALLOW_MISSING_PROPERTY} is set. */
  public static RuntimeException missing(String what, Path expectedAt) {
    String message = what + " not found (expected at " + expectedAt + "). " + SETUP_HINT + ".";
    if (Boolean.getBoolean(ALLOW_MISSING_PROPERTY)) {
      return new TestAbortedException(message + " Skipped because -D" + ALLOW_MISSING_PROPERTY + "=true.");
    }
    return new MissingTestBinaryException(message + " (Local development only: -D" + ALLOW_MISSING_PROPERTY
        + "=true skips such tests instead.)");
  }

  private Optional<String> env(String name) {
    return Optional.ofNullable(env.get(name)).filter(v -> !v.isBlank());
  }

  private static boolean versionMatches(String wanted, Path dir) {
    String version = dir.getFileName().toString().replace("-linux-amd64", "");
    String regex = Pattern.quote(wanted.trim()).replace("*", "\\E[0-9]+\\Q");
    return version.matches(regex);
  }

  private static long versionKey(Path dir) {
    var m = VERSION_DIR.matcher(dir.getFileName().toString());
    if (!m.matches()) {
      return -1;
    }
    return Long.parseLong(m.group(1)) * 1_000_000L + Long.parseLong(m.group(2)) * 1_000L + Long.parseLong(m.group(3));
  }
}
