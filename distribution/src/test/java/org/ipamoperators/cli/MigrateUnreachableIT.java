package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ipam migrate} against an address nothing listens on (the client's retries take about 20 s: an IT). */
class MigrateUnreachableIT {

  @Test
  void anUnreachableClusterIsOneLineAndExitTwo(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("kubeconfig");
    Files.writeString(bad, """
        apiVersion: v1
        kind: Config
        clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
        contexts: [{name: c, context: {cluster: c, user: u}}]
        users: [{name: u, user: {token: t}}]
        current-context: c
        """);
    IpamRun run = IpamRun.of("migrate", "--kubeconfig", bad.toString(), "-o", "json");
    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.err().lines().toList()).singleElement().asString()
        .startsWith("ipam migrate: could not read the cluster");
  }
}
