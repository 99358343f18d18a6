package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.ipamoperators.testsupport.CommandResult;
import org.ipamoperators.testsupport.Commands;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The OCI image {@code ipam-operators/ipam} as Jib wrote it (the {@code image} profile, which
 * scripts/test.sh turns on as root): its layers match their digests, and unpacked and run as the
 * image says (entrypoint, environment, user 65532) in a chroot with its own /proc, it answers
 * {@code ipam --version}, plans an example, and carries the keepalived and ip binaries the DaemonSet
 * uses.
 * Without the profile there is no image to check, and the tests are reported as skipped.
 */
class ImageIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static Path rootfs;
  private static JsonNode config;

  private static Path dir;

  @BeforeAll
  static void unpack() throws Exception {
    String tar = System.getProperty("ipam.image.tar");
    Assumptions.assumeTrue(tar != null, "no image built: run with -Dipam.image.base=... (scripts/test.sh does as root)");
    dir = Files.createTempDirectory("ipam-image");
    Path oci = Files.createDirectories(dir.resolve("oci"));
    Commands.run("tar", "-xf", tar, "-C", oci.toString()).orThrow();
    JsonNode index = JSON.readTree(oci.resolve("index.json").toFile());
    JsonNode manifest = JSON.readTree(blob(oci, index.get("manifests").get(0).get("digest").asText()).toFile());
    config = JSON.readTree(blob(oci, manifest.get("config").get("digest").asText()).toFile());
    rootfs = Files.createDirectories(dir.resolve("rootfs"));
    JsonNode diffIds = config.get("rootfs").get("diff_ids");
    JsonNode layers = manifest.get("layers");
    assertThat(layers).hasSameSizeAs(diffIds);
    for (int i = 0; i < layers.size(); i++) {
      Path layer = blob(oci, layers.get(i).get("digest").asText());
      assertThat(digest(layer, false)).as("layer %d digest", i).isEqualTo(layers.get(i).get("digest").asText());
      assertThat(digest(layer, true)).as("layer %d diff_id", i).isEqualTo(diffIds.get(i).asText());
      CommandResult listing = Commands.run("tar", "-tzf", layer.toString()).orThrow();
      assertThat(listing.stdout()).as("no whiteouts to apply").doesNotContain(".wh.");
      Commands.run(List.of("tar", "-xzf", layer.toString(), "-C", rootfs.toString(), "--numeric-owner"),
          Duration.ofMinutes(2)).orThrow();
    }
  }

  @AfterAll
  static void removeRootfs() {
    if (dir != null) {
      // rm, not JUnit's @TempDir: the root file system is full of absolute symbolic links.
      Commands.run(List.of("rm", "-rf", "--one-file-system", dir.toString()), Duration.ofMinutes(1)).orThrow();
    }
  }

  @Test
  void theImageRunsAsTheNonRootUserFromItsEntrypoint() {
    assertThat(config.get("config").get("User").asText()).isEqualTo("65532:65532");
    CommandResult version = runInImage(List.of("--version"));
    assertThat(version.exitCode()).as(version.toString()).isZero();
    assertThat(version.stdout()).startsWith("ipam ");
    // The keepalived DaemonSet's containers run `ipam` from PATH.
    assertThat(config.get("config").get("Entrypoint")).extracting(JsonNode::asText)
        .containsExactly("/usr/local/bin/ipam");
    CommandResult reloader = runRaw(List.of("ipam", "keepalived-reloader", "--help"));
    assertThat(reloader.exitCode()).as(reloader.toString()).isZero();
    assertThat(reloader.stdout()).contains("--source", "--pid-file", "--metrics-port");
    CommandResult id = runRaw(List.of("id", "-u"));
    assertThat(id.stdout().strip()).isEqualTo("65532");
  }

  @Test
  void theImagePlansAnExample() throws Exception {
    Path example = rootfs.resolve("tmp/egress-two-zones.yaml");
    Files.copy(Path.of("..", "examples", "egress-two-zones.yaml"), example);
    CommandResult plan = runInImage(List.of("plan", "/tmp/egress-two-zones.yaml", "--output", "json"));
    assertThat(plan.exitCode()).as(plan.toString()).isZero();
    JsonNode json = JSON.readTree(plan.stdout());
    assertThat(json.isObject()).isTrue();
    assertThat(json.size()).isPositive();
  }

  @Test
  void theImageCarriesKeepalivedAndIpForTheDaemonSet() {
    CommandResult keepalived = runRaw(List.of("keepalived", "--version"));
    assertThat(keepalived.output()).contains("Keepalived v2");
    // The config reloader resolves interfaceFromIP with `ip route get`.
    CommandResult ip = runRaw(List.of("ip", "-V"));
    assertThat(ip.exitCode()).as(ip.toString()).isZero();
    assertThat(ip.output()).contains("iproute2");
    // keepalived's vrrp_script for externalTrafficPolicy: Local Services runs curl.
    CommandResult curl = runRaw(List.of("curl", "--version"));
    assertThat(curl.exitCode()).as(curl.toString()).isZero();
  }

  /** The image's entrypoint with {@code args} as its command. */
  private static CommandResult runInImage(List<String> args) {
    List<String> command = new ArrayList<>();
    config.get("config").get("Entrypoint").forEach(n -> command.add(n.asText()));
    command.addAll(args);
    return runRaw(command);
  }

  /** {@code command} in the unpacked image: own mount and PID namespaces, /proc, the image's env and user. */
  private static CommandResult runRaw(List<String> command) {
    List<String> full = new ArrayList<>(List.of("unshare", "--mount", "--pid", "--fork",
        "--mount-proc=" + rootfs.resolve("proc"), "chroot", "--userspec=65532:65532", rootfs.toString(),
        "/usr/bin/env", "-i"));
    config.get("config").get("Env").forEach(n -> full.add(n.asText()));
    full.add("HOME=/home/ipam");
    full.addAll(command);
    return Commands.run(full, Duration.ofMinutes(2));
  }

  private static Path blob(Path oci, String digest) {
    return oci.resolve("blobs").resolve(digest.replace(':', '/'));
  }

  private static String digest(Path file, boolean gunzip) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    try (InputStream raw = Files.newInputStream(file); InputStream in = gunzip ? new GZIPInputStream(raw) : raw) {
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        sha.update(buffer, 0, n);
      }
    }
    return "sha256:" + HexFormat.of().formatHex(sha.digest());
  }
}
