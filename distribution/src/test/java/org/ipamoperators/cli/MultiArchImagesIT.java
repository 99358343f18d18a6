package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.ipamoperators.testsupport.CommandResult;
import org.ipamoperators.testsupport.Commands;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The multi-arch images (the {@code image-multi-arch} profile, target/images/multi-arch/*.tar): each is an OCI
 * image layout whose index names a linux/amd64 and a linux/arm64 image, the amd64 one exactly Jib's image, the
 * arm64 one with the same application layers (but the amd64 image's AOT cache) on an arm64 base whose binaries are
 * aarch64; and the arm64 {@code ipam} image, unpacked, starts under qemu-user emulation and answers
 * {@code ipam --version} and {@code ipam operator --help}.
 */
class MultiArchImagesIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String INDEX = "application/vnd.oci.image.index.v1+json";
  private static final int EM_AARCH64 = 0xB7;
  private static final List<String> IMAGES = List.of("ipam", "egressip", "eip", "vip", "keepalived");
  private static Path dir;

  @BeforeAll
  static void unpack() throws Exception {
    Assumptions.assumeTrue(System.getProperty("ipam.image.multiArchDir") != null,
        "no multi-arch images built: run with -Dipam.image.base.arm64=... (scripts/test.sh does as root)");
    dir = Files.createTempDirectory("ipam-multi-arch");
    for (String image : IMAGES) {
      Path oci = Files.createDirectories(dir.resolve(image));
      Commands.run(List.of("tar", "-xf", multiArchTar(image).toString(), "-C", oci.toString()),
          Duration.ofMinutes(2)).orThrow();
    }
  }

  @AfterAll
  static void remove() {
    if (dir != null) {
      // rm, not JUnit's @TempDir: the unpacked root file system is full of absolute symbolic links.
      Commands.run(List.of("rm", "-rf", "--one-file-system", dir.toString()), Duration.ofMinutes(1)).orThrow();
    }
  }

  @Test
  void eachIndexNamesAnAmd64AndAnArm64ImageWithTheSameApplicationLayers() throws Exception {
    for (String image : IMAGES) {
      Path oci = dir.resolve(image);
      JsonNode top = JSON.readTree(oci.resolve("index.json").toFile());
      assertThat(top.get("manifests")).as(image).hasSize(1);
      JsonNode indexDescriptor = top.get("manifests").get(0);
      assertThat(indexDescriptor.get("mediaType").asText()).isEqualTo(INDEX);
      assertThat(indexDescriptor.at("/annotations/org.opencontainers.image.ref.name").asText())
          .isEqualTo("ipam-operators/" + image + ":" + jibImageVersion(image));
      JsonNode index = JSON.readTree(verifiedBlob(oci, indexDescriptor).toFile());
      assertThat(index.get("manifests")).as(image).hasSize(2);
      JsonNode amd = index.get("manifests").get(0);
      JsonNode arm = index.get("manifests").get(1);
      assertThat(List.of(platform(amd), platform(arm))).as(image).containsExactly("linux/amd64", "linux/arm64");
      assertThat(amd.get("digest").asText()).as("%s: the amd64 image is Jib's", image)
          .isEqualTo(jibManifestDigest(image));
      JsonNode amdManifest = JSON.readTree(verifiedBlob(oci, amd).toFile());
      JsonNode armManifest = JSON.readTree(verifiedBlob(oci, arm).toFile());
      JsonNode amdConfig = JSON.readTree(verifiedBlob(oci, amdManifest.get("config")).toFile());
      JsonNode armConfig = JSON.readTree(verifiedBlob(oci, armManifest.get("config")).toFile());
      assertThat(amdConfig.get("architecture").asText()).isEqualTo("amd64");
      assertThat(armConfig.get("architecture").asText()).as(image).isEqualTo("arm64");
      assertThat(armConfig.get("os").asText()).isEqualTo("linux");
      assertThat(armConfig.get("config")).as("%s: same entrypoint, env, user, labels", image)
          .isEqualTo(amdConfig.get("config"));
      assertThat(armConfig.at("/history/0/created_by").asText()).contains("Debian", "arm64");
      List<String> amdLayers = digests(amdManifest.get("layers"));
      List<String> armLayers = digests(armManifest.get("layers"));
      // The AOT cache's layer (the last, when the amd64 runtime is 25) is amd64's only: arm64's runtime is 17.
      int aot = isAotLayer(amdConfig.at("/history/" + (amdLayers.size() - 1))) ? 1 : 0;
      assertThat(armLayers).hasSize(amdLayers.size() - aot).hasSizeGreaterThan(2);
      assertThat(armLayers.subList(1, armLayers.size())).as("%s application layers", image)
          .isEqualTo(amdLayers.subList(1, amdLayers.size() - aot));
      assertThat(armConfig.get("history")).as("%s: no AOT cache on arm64", image)
          .hasSize(armLayers.size()).noneMatch(MultiArchImagesIT::isAotLayer);
      assertThat(armLayers.get(0)).as("%s base layer", image).isNotEqualTo(amdLayers.get(0));
      for (JsonNode layer : armManifest.get("layers")) {
        verifiedBlob(oci, layer);
      }
      assertThat(armConfig.at("/rootfs/diff_ids")).hasSameSizeAs(armLayers);
      assertThat(armConfig.at("/rootfs/diff_ids/1")).isEqualTo(amdConfig.at("/rootfs/diff_ids/1"));
    }
  }

  @Test
  void theArm64IpamImageStartsUnderEmulation() throws Exception {
    Path oci = dir.resolve("ipam");
    JsonNode index = JSON.readTree(verifiedBlob(oci, JSON.readTree(oci.resolve("index.json").toFile())
        .get("manifests").get(0)).toFile());
    JsonNode manifest = JSON.readTree(verifiedBlob(oci, index.get("manifests").get(1)).toFile());
    JsonNode config = JSON.readTree(verifiedBlob(oci, manifest.get("config")).toFile());
    Path rootfs = Files.createDirectories(dir.resolve("arm64-rootfs"));
    for (JsonNode layer : manifest.get("layers")) {
      Commands.run(List.of("tar", "-xzf", verifiedBlob(oci, layer).toString(), "-C", rootfs.toString(),
          "--numeric-owner"), Duration.ofMinutes(2)).orThrow();
    }
    for (String binary : List.of("opt/java/bin/java", "opt/java/lib/server/libjvm.so", "usr/sbin/keepalived",
        "usr/bin/bash")) {
      assertThat(elfMachine(rootfs.resolve(binary))).as(binary).isEqualTo(EM_AARCH64);
    }
    // The entrypoint script execs java: qemu-user (no binfmt_misc here) runs java itself, as the script would.
    assertThat(config.at("/config/Entrypoint/0").asText()).isEqualTo("/usr/local/bin/ipam");
    assertThat(Files.readString(rootfs.resolve("usr/local/bin/ipam")))
        .contains("exec java -cp @/app/jib-classpath-file org.ipamoperators.cli.IpamCommand \"$@\"");

    String qemu = System.getProperty("ipam.image.qemu", "");
    Assumptions.assumeTrue(!qemu.isEmpty() && Files.isExecutable(Path.of(qemu)),
        "no qemu-aarch64-static (-Dipam.image.qemu, scripts/test.sh passes scripts/qemu-aarch64.sh's): "
            + "the arm64 image is not started");
    Files.copy(Path.of(qemu), rootfs.resolve("qemu-aarch64-static"), StandardCopyOption.REPLACE_EXISTING);
    long start = System.nanoTime();
    CommandResult version = runEmulated(rootfs, config, List.of("/opt/java/bin/java", "-cp",
        "@/app/jib-classpath-file", "org.ipamoperators.cli.IpamCommand", "--version"));
    assertThat(version.exitCode()).as(version.toString()).isZero();
    assertThat(version.stdout()).startsWith("ipam ")
        .contains(config.at("/config/Labels/org.opencontainers.image.version").asText());
    // The entrypoint maps an AOT cache only where there is one: arm64's has none (its runtime, 17, rejects one).
    assertThat(rootfs.resolve("app/aot")).doesNotExist();
    assertThat(Files.readString(rootfs.resolve("opt/java/release"))).contains("JAVA_VERSION=\"17");
    CommandResult operator = runEmulated(rootfs, config, List.of("/opt/java/bin/java", "-cp",
        "@/app/jib-classpath-file", "org.ipamoperators.cli.IpamCommand", "operator", "--help"));
    assertThat(operator.exitCode()).as(operator.toString()).isZero();
    assertThat(operator.stdout()).contains("--controllers");
    CommandResult keepalived = runEmulated(rootfs, config, List.of("/usr/sbin/keepalived", "--version"));
    assertThat(keepalived.output()).contains("Keepalived v2");
    System.out.printf("arm64 ipam --version under qemu-user: %d ms%n", (System.nanoTime() - start) / 1_000_000);
  }

  /**
   * {@code command} in the unpacked arm64 image through qemu-user (which runs that one program: it does not follow
   * exec): own mount and PID namespaces, /proc, the image's env and user.
   */
  private static CommandResult runEmulated(Path rootfs, JsonNode config, List<String> command) {
    List<String> full = new ArrayList<>(List.of("unshare", "--mount", "--pid", "--fork",
        "--mount-proc=" + rootfs.resolve("proc"), "env", "-i"));
    config.get("config").get("Env").forEach(n -> full.add(n.asText()));
    full.add("HOME=/home/ipam");
    full.addAll(List.of("chroot", "--userspec=65532:65532", rootfs.toString(), "/qemu-aarch64-static"));
    full.addAll(command);
    return Commands.run(full, Duration.ofMinutes(3));
  }

  private static Path multiArchTar(String image) {
    return Path.of(System.getProperty("ipam.image.multiArchDir")).resolve(image + ".tar");
  }

  /** The per-architecture tar Jib wrote for {@code image}: the failsafe property the other image tests read. */
  private static Path jibTar(String image) {
    return Path.of(System.getProperty("ipam".equals(image) ? "ipam.image.tar" : "ipam.image." + image));
  }

  private static String jibManifestDigest(String image) throws Exception {
    CommandResult index = Commands.run(List.of("tar", "-xOf", jibTar(image).toString(), "index.json"),
        Duration.ofMinutes(1)).orThrow();
    return JSON.readTree(index.stdout()).at("/manifests/0/digest").asText();
  }

  private static String jibImageVersion(String image) throws Exception {
    CommandResult index = Commands.run(List.of("tar", "-xOf", jibTar(image).toString(), "index.json"),
        Duration.ofMinutes(1)).orThrow();
    String ref = JSON.readTree(index.stdout()).at("/manifests/0/annotations/org.opencontainers.image.ref.name")
        .asText();
    return ref.substring(ref.lastIndexOf(':') + 1);
  }

  private static boolean isAotLayer(JsonNode history) {
    return history.path("created_by").asText().startsWith("scripts/image-aot-layer.sh");
  }

  private static String platform(JsonNode descriptor) {
    return descriptor.at("/platform/os").asText() + "/" + descriptor.at("/platform/architecture").asText();
  }

  private static List<String> digests(JsonNode layers) {
    List<String> digests = new ArrayList<>();
    layers.forEach(l -> digests.add(l.get("digest").asText()));
    return digests;
  }

  /** The blob a descriptor names, after checking its size and digest. */
  private static Path verifiedBlob(Path oci, JsonNode descriptor) throws Exception {
    String digest = descriptor.get("digest").asText();
    Path blob = oci.resolve("blobs").resolve("sha256").resolve(digest.substring("sha256:".length()));
    assertThat(Files.size(blob)).as("size of %s", digest).isEqualTo(descriptor.get("size").asLong());
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    try (InputStream in = Files.newInputStream(blob)) {
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        sha.update(buffer, 0, n);
      }
    }
    assertThat("sha256:" + HexFormat.of().formatHex(sha.digest())).isEqualTo(digest);
    return blob;
  }

  /** e_machine of an ELF file (little endian: the two bytes at offset 18). */
  private static int elfMachine(Path file) throws Exception {
    byte[] header = new byte[20];
    try (InputStream in = Files.newInputStream(file)) {
      assertThat(in.readNBytes(header, 0, 20)).isEqualTo(20);
    }
    assertThat(new String(header, 1, 3, StandardCharsets.US_ASCII)).as(file.toString()).isEqualTo("ELF");
    return (header[18] & 0xFF) | (header[19] & 0xFF) << 8;
  }
}
