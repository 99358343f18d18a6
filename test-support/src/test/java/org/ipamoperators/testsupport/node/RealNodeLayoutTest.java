package org.ipamoperators.testsupport.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RealNodeLayoutTest {

  @Test
  void theScriptsAreFoundFromAModuleDirectory(@TempDir Path repo) throws Exception {
    Path scripts = Files.createDirectories(repo.resolve("scripts/real-node"));
    Files.writeString(scripts.resolve("up.sh"), "#!/bin/bash\n");
    Path module = Files.createDirectories(repo.resolve("distribution"));
    assertThat(RealNode.Layout.findScripts(module)).contains(scripts);
    assertThat(RealNode.Layout.findScripts(repo)).contains(scripts);
  }

  @Test
  void aDirectoryWithoutTheScriptsIsNotMistakenForOne(@TempDir Path dir) throws Exception {
    Files.createDirectories(dir.resolve("scripts/real-node"));   // no up.sh
    assertThat(RealNode.Layout.findScripts(dir.resolve("scripts"))).isEmpty();
  }

  @Test
  void theScriptsGetTheLayoutAsEnvironment() {
    var layout = new RealNode.Layout(Path.of("/s"), Path.of("/bin/k8s"), Path.of("/img"), Path.of("/state"));
    assertThat(layout.environment()).containsEntry("K8S_BIN", "/bin/k8s")
        .containsEntry("IPAM_REAL_NODE_IMAGES", "/img").containsEntry("IPAM_REAL_NODE_STATE", "/state");
  }
}
