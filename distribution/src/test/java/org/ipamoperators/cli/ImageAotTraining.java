package org.ipamoperators.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.ipamoperators.testsupport.Commands;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.crds.CrdInstaller;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;

/**
 * Trains each controller image's AOT cache at build time and adds it to the image tar (the {@code image} profile
 * runs this after Jib, before the multi-arch images and the ITs). For each image: its own runtime (/opt/java of its
 * base layer) and its jars, unpacked with Jib's file times and run from the image's class path in its order, run
 * {@code ipam operator} for the image's controllers against a real kube-apiserver with the chart's JVM options for
 * that controller, {@code -XX:+UseCompactObjectHeaders} (the entrypoint's) and {@code -XX:AOTCacheOutput}; once the
 * caches are synced it creates one object of each kind the controllers reconcile, waits for the reconcile to show,
 * and stops the JVM with SIGTERM, which writes the cache. scripts/image-aot-layer.sh then adds the cache as a layer.
 *
 * <p>Two training runs do not write the same bytes, so a trained cache is kept under
 * {@code ${IPAM_TEST_CACHE:-~/.cache/ipam-operators}/images/aot}, named by the hash of its inputs (the runtime's
 * modules, the jars in class-path order, the recipe): the same inputs give the same image. Without a runtime of JDK
 * 25 or newer in the image, or without the apiserver binaries, the images stay as Jib built them and a WARNING says
 * so.
 *
 * <p>Arguments: {@code SCRIPTS_DIR VALUES_YAML IMAGE.tar=CONTROLLER[,CONTROLLER...] ...}.
 */
public final class ImageAotTraining {
  /** Part of every cache's key: change it when the training changes. */
  static final String RECIPE = "ipam operator training 1";
  static final String CACHES_SYNCED = "ipam operator started: caches synced";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int MIN_FEATURE = 25;
  /** Kept caches of other inputs (five images' worth: a build's before this one's). */
  private static final int KEPT_OTHERS = 5;

  private final Path scripts;
  private final JsonNode values;
  private final AotTrainingObjects objects = new AotTrainingObjects();
  private final Set<Path> used = new HashSet<>();
  private KubeApiServer server;

  private ImageAotTraining(Path scripts, JsonNode values) {
    this.scripts = scripts;
    this.values = values;
  }

  public static void main(String[] args) {
    try {
      run(args);
    } catch (Exception e) {
      e.printStackTrace();
      System.exit(1);
    }
    System.exit(0); // the fabric8 client's pool threads would keep the JVM a minute longer
  }

  static void run(String[] args) throws Exception {
    Map<Path, List<String>> images = new LinkedHashMap<>();
    for (int i = 2; i < args.length; i++) {
      String[] parts = args[i].split("=", 2);
      images.put(Path.of(parts[0]), List.of(parts[1].split(",")));
    }
    ImageAotTraining training = new ImageAotTraining(Path.of(args[0]),
        new ObjectMapper(new YAMLFactory()).readTree(Path.of(args[1]).toFile()));
    Files.createDirectories(cacheDir());
    try {
      for (Map.Entry<Path, List<String>> image : images.entrySet()) {
        if (!training.addCache(image.getKey(), image.getValue())) {
          return;
        }
      }
      training.prune();
    } finally {
      if (training.server != null) {
        training.server.stop();
      }
    }
  }

  /**
   * Deletes the kept caches of older inputs but the newest {@link #KEPT_OTHERS}: every change of a jar trains new
   * ones (tens of MiB each), and a few let a build of another branch or revision reuse its own.
   */
  private void prune() throws IOException {
    List<Path> others;
    try (var files = Files.list(cacheDir())) {
      others = files.filter(f -> f.toString().endsWith(".aot") && !used.contains(f))
          .sorted(Comparator.comparing((Path f) -> f.toFile().lastModified()).reversed()).toList();
    }
    for (Path old : others.subList(Math.min(KEPT_OTHERS, others.size()), others.size())) {
      Files.deleteIfExists(old);
    }
  }

  private static void log(String format, Object... args) {
    System.out.printf("[image-aot] " + format + "%n", args);
  }

  /** Adds the cache to {@code tar}; false (with a WARNING) when the images get none. */
  private boolean addCache(Path tar, List<String> controllers) throws Exception {
    Path work = Files.createTempDirectory("ipam-image-aot");
    try {
      UnpackedImage image = UnpackedImage.unpack(tar, work, false);
      if (image.hasAotLayer()) {
        log("%s has an AOT cache already", tar);
        return true;
      }
      int feature = image.runtimeFeature();
      if (feature < MIN_FEATURE) {
        log("WARNING: %s has a Java %d runtime (no JDK %d or newer for scripts/image-base.sh): the images get no "
            + "AOT cache", tar, feature, MIN_FEATURE);
        return false;
      }
      String options = javaToolOptions(values, controllers);
      Path cache = cacheFile(image, controllers, options);
      if (Files.isRegularFile(cache)) {
        log("%s: cached %s", tar.getFileName(), cache);
        Files.setLastModifiedTime(cache, FileTime.from(Instant.now()));
      } else {
        if (!startServer()) {
          return false;
        }
        long started = System.nanoTime();
        train(image, controllers, options, cache, work);
        log("%s: trained %s (%d bytes) in %d s", tar.getFileName(), cache, Files.size(cache),
            TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));
      }
      used.add(cache);
      Commands.run(List.of("bash", scripts.resolve("image-aot-layer.sh").toString(), tar.toString(),
          cache.toString()), Duration.ofMinutes(5)).orThrow();
      return true;
    } finally {
      Commands.run(List.of("rm", "-rf", "--one-file-system", work.toString()), Duration.ofMinutes(1)).orThrow();
    }
  }

  private boolean startServer() {
    if (server != null) {
      return true;
    }
    try {
      server = KubeApiServer.startPrivate();
    } catch (RuntimeException e) {
      log("WARNING: no kube-apiserver to train against (%s): the images get no AOT cache", e.getMessage());
      return false;
    }
    try (KubernetesClient client = server.newClient()) {
      List<String> crds = new ArrayList<>(List.of("META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
          "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
          "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml", "META-INF/fabric8/ipgroups.paas.org-v1.yml",
          "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml",
          "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml",
          "META-INF/fabric8/eips.materialize.cloud-v1.yml"));
      crds.add(ThirdPartyCrd.HOST_SUBNET.resource());
      crds.add(ThirdPartyCrd.NET_NAMESPACE.resource());
      CrdInstaller.install(client, crds.toArray(String[]::new));
    }
    return true;
  }

  static Path cacheDir() {
    String root = System.getenv().getOrDefault("IPAM_TEST_CACHE",
        Path.of(System.getProperty("user.home"), ".cache", "ipam-operators").toString());
    return Path.of(root, "images", "aot");
  }

  /** The trained cache for these inputs (it need not exist). */
  static Path cacheFile(UnpackedImage image, List<String> controllers, String options) throws Exception {
    return cacheDir().resolve(key(image, controllers, options) + ".aot");
  }

  /** {@link #javaToolOptions} of the chart in the source tree (the working directory is distribution's). */
  static String chartJavaToolOptions(List<String> controllers) throws IOException {
    return javaToolOptions(new ObjectMapper(new YAMLFactory()).readTree(
        Path.of("src", "main", "helm", "ipam-operators", "values.yaml").toFile()), controllers);
  }

  /** The chart's JAVA_TOOL_OPTIONS for the controller (values.yaml), the chart-wide ones for several. */
  static String javaToolOptions(JsonNode values, List<String> controllers) {
    if (controllers.size() == 1) {
      JsonNode own = values.path("controllers").path(controllers.get(0)).path("javaToolOptions");
      if (own.isTextual()) {
        return own.asText();
      }
    }
    // A heap below 32 GiB whatever the machine: compressed oops must match between training and use.
    return values.path("javaToolOptions").asText() + " -Xmx1g";
  }

  private static String key(UnpackedImage image, List<String> controllers, String options) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    sha.update((RECIPE + "\n" + controllers + "\n" + options + "\n").getBytes(StandardCharsets.UTF_8));
    update(sha, image.runtime().resolve("lib").resolve("modules"));
    for (Path jar : image.classPath()) {
      sha.update((jar.getFileName() + " " + Files.size(jar) + "\n").getBytes(StandardCharsets.UTF_8));
      update(sha, jar);
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  private static void update(MessageDigest sha, Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        sha.update(buffer, 0, n);
      }
    }
  }

  private void train(UnpackedImage image, List<String> controllers, String options, Path cache, Path work)
      throws Exception {
    String ns = "aot-" + Long.toHexString(System.nanoTime());
    try (KubernetesClient client = server.newClient()) {
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      Path kubeconfig = OperatorRun.writeKubeconfig(work, server.kubeconfig());
      Path output = work.resolve("operator.aot");
      List<String> command = new ArrayList<>(List.of(image.runtime().resolve("bin/java").toString(),
          "-XX:+UseCompactObjectHeaders", "-XX:AOTCacheOutput=" + output, "-cp", image.classPathString(),
          "org.ipamoperators.cli.IpamCommand", "operator", "--controllers", String.join(",", controllers),
          "--kubeconfig", kubeconfig.toString(), "--http-port", Integer.toString(LoopbackPorts.freePort()),
          "--bind-address", "127.0.0.1", "--namespace", ns, "--no-leader-election"));
      ProcessBuilder b = new ProcessBuilder(command).redirectOutput(work.resolve("operator.out").toFile())
          .redirectError(work.resolve("operator.err").toFile());
      b.environment().keySet().removeIf(k -> k.startsWith("AWS_") || k.startsWith("JAVA_"));
      b.environment().putAll(Map.of("JAVA_TOOL_OPTIONS", options, "MALLOC_ARENA_MAX", "2"));
      if (controllers.contains("eip")) { // no EC2 to reach: its start-up and informers are what is trained
        b.environment().putAll(Map.of("CLUSTER_NAME", "aot", "AWS_REGION", "us-east-1", "AWS_ENDPOINT_URL",
            "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID", "aot", "AWS_SECRET_ACCESS_KEY", "aot",
            "AWS_EC2_METADATA_DISABLED", "true", "NAMESPACE", ns));
      }
      long started = System.nanoTime();
      Process jvm = b.start();
      try {
        Path err = work.resolve("operator.err");
        if (!await(Duration.ofSeconds(60), () -> read(err).contains(CACHES_SYNCED) || !jvm.isAlive())
            || !jvm.isAlive()) {
          throw new IllegalStateException("ipam operator did not start; stderr:\n" + read(err));
        }
        log("%s: caches synced after %d ms", image.name(), millisSince(started));
        for (String controller : controllers) {
          boolean shown = await(Duration.ofSeconds(20), objects.create(client, ns, controller));
          log("%s: %s reconciled %s after %d ms", image.name(), controller, shown ? "an object" : "nothing",
              millisSince(started));
        }
      } finally {
        long stopping = System.nanoTime();
        jvm.destroy(); // SIGTERM: the JVM exits cleanly and writes the cache on its way out
        if (!jvm.waitFor(3, TimeUnit.MINUTES)) {
          jvm.destroyForcibly();
        }
        log("%s: exited, cache written, in %d ms", image.name(), millisSince(stopping));
      }
      if (!Files.isRegularFile(output) || Files.size(output) == 0) {
        throw new IllegalStateException("no AOT cache written; stdout:\n" + read(work.resolve("operator.out"))
            + "\nstderr:\n" + read(work.resolve("operator.err")));
      }
      Files.move(output, cache, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
  }

  private static long millisSince(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
  }

  static boolean await(Duration timeout, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) {
        return true;
      }
      Thread.sleep(50);
    }
    return condition.getAsBoolean();
  }

  static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file) : "";
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * An OCI image tar as Jib writes it, unpacked: its application files (with Jib's times) and, of its base layer,
   * the runtime only or (for a chroot) all of it.
   */
  record UnpackedImage(String name, Path root, JsonNode config) {

    static UnpackedImage unpack(Path tar, Path work, boolean wholeBase) throws IOException {
      Path oci = Files.createDirectories(work.resolve("oci"));
      Path root = Files.createDirectories(work.resolve("root"));
      Commands.run(List.of("tar", "-xf", tar.toString(), "-C", oci.toString()), Duration.ofMinutes(2)).orThrow();
      JsonNode index = JSON.readTree(oci.resolve("index.json").toFile());
      JsonNode manifest = JSON.readTree(blob(oci, index.at("/manifests/0/digest").asText()).toFile());
      JsonNode config = JSON.readTree(blob(oci, manifest.at("/config/digest").asText()).toFile());
      JsonNode layers = manifest.get("layers");
      List<String> base = new ArrayList<>(List.of("tar", "-xzf", blob(oci, layers.get(0).get("digest").asText())
          .toString(), "-C", root.toString(), "--numeric-owner"));
      base.addAll(wholeBase ? List.of() : List.of("--wildcards", "./opt/java/*"));
      Commands.run(base, Duration.ofMinutes(2)).orThrow();
      for (int i = 1; i < layers.size(); i++) { // tar keeps the entries' times: Jib's, which the cache records
        Commands.run(List.of("tar", "-xzf", blob(oci, layers.get(i).get("digest").asText()).toString(), "-C",
            root.toString(), "--numeric-owner"), Duration.ofMinutes(2)).orThrow();
      }
      Commands.run(List.of("rm", "-rf", oci.toString()), Duration.ofMinutes(1)).orThrow();
      return new UnpackedImage(tar.getFileName().toString(), root, config);
    }

    boolean hasAotLayer() {
      JsonNode history = config.get("history");
      return history.get(history.size() - 1).path("created_by").asText().startsWith("scripts/image-aot-layer.sh");
    }

    Path runtime() {
      return root.resolve("opt/java");
    }

    int runtimeFeature() throws IOException {
      return Files.readAllLines(runtime().resolve("release")).stream()
          .filter(l -> l.startsWith("JAVA_VERSION=\"")).findFirst()
          .map(l -> Integer.parseInt(l.replaceAll("^JAVA_VERSION=\"(\\d+).*", "$1"))).orElse(0);
    }

    /** The image's class path (/app/jib-classpath-file) as host paths, in its order, wildcards and all. */
    List<String> classPathEntries() throws IOException {
      List<String> entries = new ArrayList<>();
      for (String entry : Files.readString(root.resolve("app/jib-classpath-file")).strip().split(":")) {
        entries.add(root.resolve(entry.substring(1)).toString());
      }
      return entries;
    }

    /**
     * The jars the class path names that the image has, a wildcard's in name order: the class path file also
     * names the jars the layer filter left out of this image.
     */
    List<Path> classPath() throws IOException {
      List<Path> jars = new ArrayList<>();
      for (String entry : classPathEntries()) {
        if (entry.endsWith("/*")) {
          try (var files = Files.list(Path.of(entry.substring(0, entry.length() - 2)))) {
            files.filter(f -> f.toString().endsWith(".jar")).sorted().forEach(jars::add);
          }
        } else if (Files.isRegularFile(Path.of(entry))) {
          jars.add(Path.of(entry));
        }
      }
      return jars;
    }

    String classPathString() throws IOException {
      return String.join(":", classPathEntries());
    }

    private static Path blob(Path oci, String digest) {
      return oci.resolve("blobs").resolve(digest.replace(':', '/'));
    }
  }
}
