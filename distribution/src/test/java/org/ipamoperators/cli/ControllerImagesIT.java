package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.ipamoperators.testsupport.Commands;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One image per controller (the {@code image} profile): egressip's and eip's carry the AWS SDK and cloud-aws (eip's
 * without the Azure SDK and OpenShift's network model); vip's and keepalived's carry neither cloud SDK, nor
 * OpenShift's network model; none carries helm-java (ipam demo's); all share the base layer and carry the
 * {@code ipam} command. That the images run is shown by {@link ControllersOnNodeIT} and {@link EipOnNodeIT}, which
 * run each controller from its own image on a real kubelet.
 */
class ControllerImagesIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void onlyTheEgressipAndEipImagesCarryTheAwsSdk(@TempDir Path dir) throws Exception {
    Assumptions.assumeTrue(System.getProperty("ipam.image.vip") != null,
        "no images built: run with -Dipam.image.base=... (scripts/test.sh does as root)");
    Image egressip = Image.read(Path.of(System.getProperty("ipam.image.egressip")), dir.resolve("egressip"));
    Image vip = Image.read(Path.of(System.getProperty("ipam.image.vip")), dir.resolve("vip"));
    Image keepalived = Image.read(Path.of(System.getProperty("ipam.image.keepalived")), dir.resolve("keepalived"));
    Image eip = Image.read(Path.of(System.getProperty("ipam.image.eip")), dir.resolve("eip"));

    assertThat(egressip.libs()).anyMatch(l -> l.startsWith("ec2-")).anyMatch(l -> l.startsWith("cloud-aws-"))
        .anyMatch(l -> l.startsWith("sts-")).anyMatch(l -> l.startsWith("cloud-azure-"))
        .anyMatch(l -> l.startsWith("azure-resourcemanager-network-"));
    String sdkVersion = egressip.libs().stream().filter(l -> l.startsWith("ec2-")).findFirst().orElseThrow()
        .replaceAll("^ec2-(.*)\\.jar$", "$1");
    for (Image lean : List.of(vip, keepalived)) {
      assertThat(lean.libs()).as("%s libs", lean.name())
          .noneMatch(l -> l.endsWith("-" + sdkVersion + ".jar"))
          .noneMatch(l -> l.startsWith("cloud-aws-") || l.startsWith("openshift-model-")
              || l.startsWith("eventstream-") || l.startsWith("reactive-streams-"))
          .noneMatch(l -> l.startsWith("azure-") || l.startsWith("cloud-azure-") || l.startsWith("msal4j"))
          .anyMatch(l -> l.startsWith("controller-vip-")).anyMatch(l -> l.startsWith("controller-keepalived-"))
          .anyMatch(l -> l.startsWith("kubernetes-client-"));
      assertThat(lean.layers().get(0)).as("the base layer is shared").isEqualTo(egressip.layers().get(0));
      assertThat(lean.appBytes()).as("%s application layers", lean.name()).isLessThan(egressip.appBytes() / 2);
    }
    // eip's image is built after vip's with the same (stateful, shared) layer-filter extension: it must still
    // carry the whole AWS SDK egressip's has, and nothing of Azure or OpenShift.
    List<String> awsSdk = egressip.libs().stream().filter(l -> l.endsWith("-" + sdkVersion + ".jar")
        || l.startsWith("eventstream-") || l.startsWith("reactive-streams-")).toList();
    assertThat(awsSdk).hasSizeGreaterThan(10);
    assertThat(eip.libs()).as("eip libs").containsAll(awsSdk)
        .anyMatch(l -> l.startsWith("cloud-aws-")).anyMatch(l -> l.startsWith("controller-eip-"))
        .noneMatch(l -> l.startsWith("azure-") || l.startsWith("cloud-azure-") || l.startsWith("msal4j"))
        .noneMatch(l -> l.startsWith("openshift-model-"));
    assertThat(eip.layers().get(0)).as("the base layer is shared").isEqualTo(egressip.layers().get(0));
    assertThat(eip.appBytes()).as("eip application layers").isGreaterThan(vip.appBytes())
        .isLessThan(egressip.appBytes());
    for (Image image : List.of(egressip, eip, vip, keepalived)) {
      assertThat(image.libs()).as("%s libs: helm-java is ipam demo's, not a controller's", image.name())
          .noneMatch(l -> l.startsWith("helm-java-") || l.startsWith("linux-amd64-") || l.startsWith("lib-api-"));
    }
    assertThat(egressip.env()).as("provider jars of other clouds go here").contains(
        "IPAM_PROVIDER_DIR=/opt/ipam/providers");
    assertThat(vip.env()).noneMatch(e -> e.startsWith("IPAM_PROVIDER_DIR="));
    System.out.printf("image sizes (compressed, base %d bytes): egressip app %d, eip app %d, vip app %d, "
        + "keepalived app %d%n", egressip.baseBytes(), egressip.appBytes(), eip.appBytes(), vip.appBytes(),
        keepalived.appBytes());
  }

  /**
   * An OCI image tar as Jib writes it: its layers (digests, compressed sizes; application bytes without an AOT
   * cache's layer) and the jars in /app/libs.
   */
  record Image(String name, List<String> layers, long baseBytes, long appBytes, List<String> libs, List<String> env) {

    static Image read(Path tar, Path dir) throws Exception {
      Files.createDirectories(dir);
      Commands.run(List.of("tar", "-xf", tar.toString(), "-C", dir.toString()), Duration.ofMinutes(2)).orThrow();
      JsonNode index = JSON.readTree(dir.resolve("index.json").toFile());
      JsonNode manifest = JSON.readTree(blob(dir, index.get("manifests").get(0).get("digest").asText()).toFile());
      JsonNode config = JSON.readTree(blob(dir, manifest.get("config").get("digest").asText()).toFile());
      List<String> layers = new ArrayList<>();
      List<String> libs = new ArrayList<>();
      long base = 0;
      long app = 0;
      for (JsonNode layer : manifest.get("layers")) {
        String digest = layer.get("digest").asText();
        boolean aot = config.at("/history/" + layers.size() + "/created_by").asText()
            .startsWith("scripts/image-aot-layer.sh");
        if (layers.isEmpty()) {
          base = layer.get("size").asLong();
        } else if (!aot) { // the AOT cache's layer (ImageAotCacheIT) is not the application's
          app += layer.get("size").asLong();
          Commands.run(List.of("tar", "-tzf", blob(dir, digest).toString()), Duration.ofMinutes(1)).orThrow()
              .stdout().lines().filter(l -> l.matches("\\.?/?app/libs/[^/]+\\.jar"))
              .map(l -> l.substring(l.lastIndexOf('/') + 1)).forEach(libs::add);
        }
        layers.add(digest);
      }
      List<String> env = new ArrayList<>();
      config.path("config").path("Env").forEach(e -> env.add(e.asText()));
      return new Image(tar.getFileName().toString(), layers, base, app, libs, env);
    }

    private static Path blob(Path dir, String digest) {
      return dir.resolve("blobs").resolve("sha256").resolve(digest.substring("sha256:".length()));
    }
  }
}
