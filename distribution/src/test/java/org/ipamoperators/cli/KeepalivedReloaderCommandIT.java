package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.ipamoperators.cli.reloader.KeepalivedReloaderCommand;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.keepalived.Keepalived;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ipam keepalived-reloader} as the keepalived DaemonSet runs it, with the real keepalived as
 * the judge: {@code --once} (the init container) writes only a configuration keepalived accepts, and
 * the sidecar serves its counters and readiness on {@code --metrics-port}.
 */
class KeepalivedReloaderCommandIT {
  private static final String VALID = """
      global_defs {
          router_id test
      }
      """;

  @Test
  void onceWritesAnAcceptedConfigurationAndRefusesABrokenOne(@TempDir Path dir) throws Exception {
    Path source = Files.writeString(dir.resolve("node-a"), VALID);
    Path target = dir.resolve("keepalived.conf");
    String keepalived = Keepalived.locate().binary().toString();

    IpamRun first = IpamRun.of("keepalived-reloader", "--source=" + source, "--target=" + target,
        "--keepalived=" + keepalived, "--once");
    assertThat(first.exit()).as(first.err()).isZero();
    assertThat(Files.readString(target)).isEqualTo(VALID);

    Files.writeString(source, "global_defs {\n    no_such_keyword 1\n}\n");
    IpamRun broken = IpamRun.of("keepalived-reloader", "--source=" + source, "--target=" + target,
        "--keepalived=" + keepalived, "--once");
    assertThat(broken.exit()).isEqualTo(1);
    assertThat(Files.readString(target)).as("the running configuration is kept").isEqualTo(VALID);

    IpamRun missing = IpamRun.of("keepalived-reloader", "--source=" + dir.resolve("node-b"), "--target=" + target,
        "--keepalived=" + keepalived, "--once");
    assertThat(missing.exit()).isEqualTo(1);
  }

  @Test
  void theSidecarReloadsOnChangeAndServesMetricsAndReadiness(@TempDir Path dir) throws Exception {
    Path source = Files.writeString(dir.resolve("node-a"), VALID);
    Path target = dir.resolve("keepalived.conf");
    // Stands in for keepalived: a live process that survives the SIGHUP of a reload and the SIGUSR1
    // (data dump) of each scrape; it writes no dump, so no VRRP state is reported.
    Process fakeKeepalived = new ProcessBuilder("sh", "-c", "trap '' HUP USR1; while :; do sleep 1; done").start();
    Path pid = Files.writeString(dir.resolve("keepalived.pid"), Long.toString(fakeKeepalived.pid()));
    int port = LoopbackPorts.freePort();
    KeepalivedReloaderCommand command = new KeepalivedReloaderCommand();
    new picocli.CommandLine(command).parseArgs("--source=" + source, "--target=" + target, "--pid-file=" + pid,
        "--keepalived=" + Keepalived.locate().binary(), "--metrics-port=" + port, "--bind-address=127.0.0.1",
        "--interval=100ms");
    CompletableFuture<Integer> running = CompletableFuture.supplyAsync(() -> {
      try {
        return command.call();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    try {
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
        assertThat(OperatorRun.statusOrRefused(port, "/readyz")).isEqualTo(200);
        assertThat(OperatorRun.get(port, "/metrics").body()).contains("ipam_keepalived_reloads_total 1.0",
            "ipam_keepalived_config_refused_total 0.0", "ipam_keepalived_up 1.0");
        assertThat(ExportedMetrics.KEEPALIVED_POD).as("the dashboards' table of the group pods' series")
            .containsAll(ExportedMetrics.served(OperatorRun.get(port, "/metrics").body()).stream()
                .filter(n -> n.startsWith("ipam_") || n.startsWith("keepalived_")).toList())
            .contains("ipam_keepalived_reloads_total", "ipam_keepalived_config_refused_total", "ipam_keepalived_up");
      });
      assertThat(Files.readString(target)).isEqualTo(VALID);

      String changed = VALID.replace("router_id test", "router_id changed");
      Files.writeString(source, changed);
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(OperatorRun.get(port, "/metrics").body())
          .contains("ipam_keepalived_reloads_total 2.0"));
      assertThat(Files.readString(target)).isEqualTo(changed);

      // A refused configuration is counted, and the running one kept.
      Files.writeString(source, "global_defs {\n    no_such_keyword 1\n}\n");
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(OperatorRun.get(port, "/metrics").body())
          .contains("ipam_keepalived_config_refused_total 1.0", "ipam_keepalived_reloads_total 2.0"));
      assertThat(Files.readString(target)).isEqualTo(changed);

      fakeKeepalived.destroyForcibly().waitFor();
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(OperatorRun.get(port, "/metrics").body())
          .contains("ipam_keepalived_up 0.0"));
    } finally {
      command.stopForTests();
      running.get();
      fakeKeepalived.destroyForcibly();
    }
  }
}
