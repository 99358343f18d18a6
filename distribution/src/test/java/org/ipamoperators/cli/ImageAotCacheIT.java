package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Namespace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.testsupport.CommandResult;
import org.ipamoperators.testsupport.Commands;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The images' AOT caches (ImageAotTraining): each image's {@code ipam operator}, run as the image says (entrypoint,
 * environment, user 65532) in a chroot against a real kube-apiserver with its chart JVM options, maps its cache and
 * loads its classes from it, and reaches "caches synced"; {@code ipam keepalived-reloader} does not map it; the
 * cache in the image is the one kept under the hash of the image's inputs. Prints caches-synced time and CPU with the
 * cache and without it (-XX:AOTMode=off) per image. Without the images, or with images on a runtime older than 25
 * (no JDK 25 for scripts/image-base.sh), the tests are reported as skipped.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml", "META-INF/fabric8/ipgroups.paas.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml", "META-INF/fabric8/eips.materialize.cloud-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE})
class ImageAotCacheIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String SHARED = "source: shared objects file";
  private static final Map<String, String> IMAGES = Map.of("egressip", "ipam.image.egressip", "eip",
      "ipam.image.eip", "vip", "ipam.image.vip", "keepalived", "ipam.image.keepalived", "egressip,vip,keepalived",
      "ipam.image.tar");

  record Start(Duration toSynced, double cpuSeconds, long sharedClasses, long classes) {}

  @Test
  void eachImageStartsItsOperatorFromItsOwnCache(KubeApiServer server, Namespace ns, @TempDir Path dir)
      throws Exception {
    Assumptions.assumeTrue(System.getProperty("ipam.image.vip") != null,
        "no images built: run with -Dipam.image.base=... (scripts/test.sh does as root)");
    StringBuilder table = new StringBuilder(String.format("| image | AOT cache | JVM start → caches synced | CPU "
        + "| classes from the cache |%n|---|---|---|---|---|%n"));
    for (String controllers : List.of("vip", "egressip", "keepalived", "eip", "egressip,vip,keepalived")) {
      Path tar = Path.of(System.getProperty(IMAGES.get(controllers)));
      Path work = Files.createDirectories(dir.resolve(controllers.replace(',', '-')));
      try {
        ImageAotTraining.UnpackedImage image = ImageAotTraining.UnpackedImage.unpack(tar, work, true);
        Assumptions.assumeTrue(image.runtimeFeature() >= 25, "the images' runtime is older than 25: no cache");
        assertThat(image.hasAotLayer()).as("%s: the last layer is the AOT cache's", tar).isTrue();
        Path rootfs = loopbackResolver(image.root());
        Path cache = rootfs.resolve("app/aot/operator.aot");
        assertThat(cache).as("%s", tar).isRegularFile();
        assertThat(Files.mismatch(cache, ImageAotTraining.cacheFile(image, List.of(controllers.split(",")),
            ImageAotTraining.chartJavaToolOptions(List.of(controllers.split(","))))))
            .as("%s: the cache kept under the hash of the image's inputs", tar).isEqualTo(-1L);
        for (boolean aot : List.of(true, false)) {
          Start s = start(server, rootfs, controllers, ns.getMetadata().getName(), aot);
          table.append(String.format("| %s | %s | %.2f s | %.2f s | %d of %d |%n", tar.getFileName(),
              aot ? "yes" : "off", s.toSynced().toMillis() / 1000.0, s.cpuSeconds(), s.sharedClasses(), s.classes()));
          if (aot) {
            assertThat(s.sharedClasses()).as("%s: classes loaded from the AOT cache", tar)
                .isGreaterThan(s.classes() / 2);
          } else {
            assertThat(s.sharedClasses()).as("%s with -XX:AOTMode=off", tar).isZero();
          }
        }
        if (controllers.equals("keepalived")) {
          assertThat(reloaderSharedClasses(rootfs)).as("ipam keepalived-reloader maps no cache").isZero();
        }
      } finally {
        Commands.run(List.of("rm", "-rf", "--one-file-system", work.toString()), Duration.ofMinutes(1)).orThrow();
      }
    }
    System.out.println(table);
    Files.writeString(Path.of("target", "image-aot-startup.md"), table);
  }

  @Test
  void aRebuildWithTheSameInputsGivesTheSameImage(@TempDir Path dir) throws Exception {
    Assumptions.assumeTrue(System.getProperty("ipam.image.vip") != null,
        "no images built: run with -Dipam.image.base=... (scripts/test.sh does as root)");
    Path tar = Path.of(System.getProperty("ipam.image.vip"));
    Path oci = Files.createDirectories(dir.resolve("oci"));
    Commands.run(List.of("tar", "-xf", tar.toString(), "-C", oci.toString()), Duration.ofMinutes(2)).orThrow();
    Path index = oci.resolve("index.json");
    ObjectNode indexJson = (ObjectNode) JSON.readTree(index.toFile());
    ObjectNode manifest = (ObjectNode) JSON.readTree(blob(oci, indexJson.at("/manifests/0/digest").asText()).toFile());
    ObjectNode config = (ObjectNode) JSON.readTree(blob(oci, manifest.at("/config/digest").asText()).toFile());
    Assumptions.assumeTrue(config.at("/history").get(config.at("/history").size() - 1).path("created_by").asText()
        .startsWith("scripts/image-aot-layer.sh"), "no AOT cache in the images (no JDK 25 runtime)");
    // The image as Jib wrote it: without the cache's layer, diff_id and history entry.
    ArrayNode layers = (ArrayNode) manifest.get("layers");
    Files.delete(blob(oci, layers.get(layers.size() - 1).get("digest").asText()));
    layers.remove(layers.size() - 1);
    ((ArrayNode) config.at("/rootfs/diff_ids")).remove(config.at("/rootfs/diff_ids").size() - 1);
    ((ArrayNode) config.get("history")).remove(config.get("history").size() - 1);
    ObjectNode layerDescriptor = (ObjectNode) manifest.get("config");
    layerDescriptor.put("digest", put(oci, JSON.writeValueAsBytes(config)));
    layerDescriptor.put("size", JSON.writeValueAsBytes(config).length);
    ((ObjectNode) indexJson.at("/manifests/0")).put("digest", put(oci, JSON.writeValueAsBytes(manifest)))
        .put("size", JSON.writeValueAsBytes(manifest).length);
    Files.write(index, JSON.writeValueAsBytes(indexJson));
    Path jib = dir.resolve("vip.tar");
    Commands.run(List.of("tar", "-cf", jib.toString(), "-C", oci.toString(), "."), Duration.ofMinutes(2)).orThrow();

    // No apiserver needed: the cache for these inputs is kept, so nothing is trained.
    ImageAotTraining.run(new String[] {Path.of("..", "scripts").toString(),
        Path.of("src", "main", "helm", "ipam-operators", "values.yaml").toString(), jib + "=vip"});
    assertThat(Files.mismatch(jib, tar)).as("the rebuilt image tar, byte for byte").isEqualTo(-1L);
  }

  /** Stores {@code bytes} as a blob of the layout; returns its digest. */
  private static String put(Path oci, byte[] bytes) throws Exception {
    String digest = "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    Files.write(blob(oci, digest), bytes);
    return digest;
  }

  /** The unpacked image's resolver files set up for the chroot; returns {@code rootfs}. */
  private static Path loopbackResolver(Path rootfs) throws Exception {
    // No DNS query may leave loopback: the host name resolves from /etc/hosts, the resolver is loopback's.
    String host = Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
    Files.writeString(rootfs.resolve("etc/hosts"), "127.0.0.1 localhost " + host + "\n::1 localhost\n");
    Files.writeString(rootfs.resolve("etc/resolv.conf"), "nameserver 127.0.0.1\n");
    return rootfs;
  }

  private static Path blob(Path oci, String digest) {
    return oci.resolve("blobs").resolve(digest.replace(':', '/'));
  }

  /** {@code command} in the unpacked image as user 65532, with /dev, its own /proc and the image's environment. */
  private static List<String> inImage(Path rootfs, List<String> env, List<String> command) {
    List<String> full = new ArrayList<>(List.of("unshare", "--mount", "--pid", "--fork",
        "--mount-proc=" + rootfs.resolve("proc"), "sh", "-c",
        "mount --rbind /dev \"$0/dev\" && exec chroot --userspec=65532:65532 \"$0\" \"$@\"", rootfs.toString(),
        "/usr/bin/env", "-i", "HOME=/home/ipam"));
    full.addAll(env);
    full.addAll(command);
    return full;
  }

  private static Start start(KubeApiServer server, Path rootfs, String controllers, String ns, boolean aot)
      throws Exception {
    Path log = rootfs.resolve("tmp/jvm.log");
    Files.deleteIfExists(log);
    Files.writeString(rootfs.resolve("tmp/kubeconfig"), server.kubeconfig());
    // The kubeconfig names its certificates and keys by absolute path: the same path in the chroot.
    Path certs = Files.createDirectories(rootfs.resolve(server.certificateDir().toString().substring(1)));
    try (var files = Files.list(server.certificateDir())) {
      for (Path f : files.filter(f -> f.toString().matches(".*\\.(crt|key|pem)$")).toList()) {
        Files.copy(f, certs.resolve(f.getFileName().toString()), StandardCopyOption.REPLACE_EXISTING);
      }
    }
    Commands.run(List.of("chmod", "-R", "a+rX", rootfs.resolve("tmp").toString()), Duration.ofSeconds(5))
        .orThrow();
    String options = ImageAotTraining.chartJavaToolOptions(List.of(controllers.split(",")))
        + " -Xlog:class+load=info:file=/tmp/jvm.log" + (aot ? "" : " -XX:AOTMode=off");
    List<String> env = new ArrayList<>(List.of("PATH=/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
        + "/sbin:/bin", "JAVA_HOME=/opt/java", "JAVA_TOOL_OPTIONS=" + options, "MALLOC_ARENA_MAX=2"));
    if (controllers.equals("eip")) {
      env.addAll(List.of("CLUSTER_NAME=aot-it", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL=http://127.0.0.1:9",
          "AWS_ACCESS_KEY_ID=it", "AWS_SECRET_ACCESS_KEY=it", "AWS_EC2_METADATA_DISABLED=true", "NAMESPACE=" + ns));
    }
    List<String> command = inImage(rootfs, env, List.of("/usr/local/bin/ipam", "operator", "--controllers",
        controllers, "--kubeconfig", "/tmp/kubeconfig", "--http-port", Integer.toString(LoopbackPorts.freePort()),
        "--bind-address", "127.0.0.1", "--namespace", ns, "--no-leader-election"));
    Path err = rootfs.resolve("tmp/operator.err");
    Instant started = Instant.now();
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(err.toFile()).start();
    try {
      boolean synced = ImageAotTraining.await(Duration.ofSeconds(60),
          () -> ImageAotTraining.read(err).contains(ImageAotTraining.CACHES_SYNCED) || !p.isAlive());
      List<ProcessHandle> javas = p.toHandle().descendants()
          .filter(h -> h.info().command().orElse("").endsWith("/java")).toList();
      assertThat(synced && p.isAlive() && javas.size() == 1).as("caches synced; output:\n%s",
          ImageAotTraining.read(err)).isTrue();
      ProcessHandle java = javas.get(0);
      double cpu = cpuSeconds(java.pid());
      String line = ImageAotTraining.read(err).lines().filter(l -> l.contains(ImageAotTraining.CACHES_SYNCED))
          .findFirst().orElseThrow();
      Duration toSynced = Duration.between(started, Instant.parse(line.substring(0, line.indexOf(' '))));
      java.destroy();
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      List<String> loads = Files.readAllLines(log).stream().filter(l -> l.contains(" source: ")).toList();
      assertThat(loads).filteredOn(l -> l.contains("org.ipamoperators.cli.IpamCommand ")).hasSize(1);
      return new Start(toSynced, cpu, loads.stream().filter(l -> l.contains(SHARED)).count(), loads.size());
    } finally {
      p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
  }

  /** User and system CPU of process {@code pid} so far (/proc/PID/stat, clock ticks of 1/100 s). */
  private static double cpuSeconds(long pid) throws Exception {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
  }

  private static long reloaderSharedClasses(Path rootfs) throws Exception {
    Path log = rootfs.resolve("tmp/jvm.log");
    Files.deleteIfExists(log);
    CommandResult help = Commands.run(inImage(rootfs, List.of("PATH=/opt/java/bin:/usr/bin:/bin",
        "JAVA_TOOL_OPTIONS=-Xlog:class+load=info:file=/tmp/jvm.log"),
        List.of("/usr/local/bin/ipam", "keepalived-reloader", "--help")), Duration.ofMinutes(1));
    assertThat(help.exitCode()).as(help.toString()).isZero();
    List<String> loads = Files.readAllLines(log).stream().filter(l -> l.contains(" source: ")).toList();
    assertThat(loads).as("classes loaded").hasSizeGreaterThan(100);
    return loads.stream().filter(l -> l.contains(SHARED)).count();
  }
}
