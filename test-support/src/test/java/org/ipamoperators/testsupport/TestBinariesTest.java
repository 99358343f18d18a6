package org.ipamoperators.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TestBinariesTest {

  @TempDir
  Path home;

  @Test
  void defaultsToTheXdgCacheLayoutOfTestEnvScript() {
    TestBinaries binaries = new TestBinaries(Map.of(), home.toString());

    assertThat(binaries.cacheDir()).isEqualTo(home.resolve(".cache/ipam-operators"));
    assertThat(new TestBinaries(Map.of("XDG_CACHE_HOME", "/xdg"), home.toString()).cacheDir())
        .isEqualTo(Path.of("/xdg/ipam-operators"));
  }

  @Test
  void picksTheRequestedOrTheHighestKubernetesVersion() throws IOException {
    Path k8s = home.resolve("k8s");
    for (String version : new String[] {"1.9.9", "1.34.4", "1.33.10"}) {
      fakeBinaries(k8s.resolve(version + "-linux-amd64"));
    }
    Map<String, String> env = Map.of("KUBE_API_TEST_DIR", home.toString());

    assertThat(new TestBinaries(env, "/nowhere").kubernetesBinDir().getFileName()).hasToString("1.34.4-linux-amd64");
    assertThat(new TestBinaries(Map.of("KUBE_API_TEST_DIR", home.toString(), "KUBE_API_TEST_API_SERVER_VERSION",
        "1.33.*"), "/nowhere").kubernetesBinDir().getFileName()).hasToString("1.33.10-linux-amd64");
  }

  @Test
  void missingBinariesFailWithInstructionsNotASkip() {
    TestBinaries binaries = new TestBinaries(Map.of("KUBE_API_TEST_DIR", home.toString(),
        "IPAM_MOTO_SERVER", home.resolve("nope").toString()), "/nowhere");

    assertThatThrownBy(binaries::kubernetesBinDir)
        .isInstanceOf(MissingTestBinaryException.class)
        .hasMessageContaining("scripts/test-env.sh");
    assertThatThrownBy(binaries::motoServer)
        .isInstanceOf(MissingTestBinaryException.class)
        .hasMessageContaining(home.resolve("nope").toString());
  }

  private static void fakeBinaries(Path dir) throws IOException {
    Files.createDirectories(dir);
    for (String name : new String[] {"etcd", "kube-apiserver", "kubectl"}) {
      Path file = Files.createFile(dir.resolve(name));
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
  }
}
