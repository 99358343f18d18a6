package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded {@code target/ipam.jar} as users run it, in its own JVM: {@code plan} still works,
 * {@code operator} finds its service files (HTTP client, JOSDK, logback), stops cleanly on SIGTERM
 * and hands its Lease back, and a killed leader's Lease is taken over when it expires.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"})
class ShadedJarIT {
  private static final Path JAR = Path.of("target", "ipam.jar");
  private static final Duration WAIT = Duration.ofSeconds(90);
  private final List<Process> processes = new ArrayList<>();
  private OperatorRun standby;

  @AfterEach
  void stopEverything() throws Exception {
    for (Process p : processes) {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
    if (standby != null && !standby.exited()) {
      standby.close();
    }
  }

  private Process java(Path dir, String name, String... args) throws Exception {
    assertThat(JAR).as("run `mvn package` first").exists();
    List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
        "-jar", JAR.toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command)
        .redirectOutput(dir.resolve(name + ".out").toFile())
        .redirectError(dir.resolve(name + ".err").toFile())
        .start();
    processes.add(p);
    return p;
  }

  private static String read(Path dir, String file) throws Exception {
    File f = dir.resolve(file).toFile();
    return f.exists() ? Files.readString(f.toPath(), StandardCharsets.UTF_8) : "";
  }

  @Test
  void planStillWorksFromTheJar(@TempDir Path dir) throws Exception {
    Process p = java(dir, "plan", "plan", Path.of("..", "examples", "egress-two-zones.yaml").toString());
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(read(dir, "plan.err")).isZero();
    assertThat(read(dir, "plan.out")).contains("Allocations", "Placement", "Changes", "Problems");
    assertThat(read(dir, "plan.err")).isEmpty();
  }

  @Test
  void operatorStopsOnSigtermAndHandsTheLeaseBack(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    int port = LoopbackPorts.freePort();
    Process p = java(dir, "operator", OperatorRun.args(kubeconfig, port, client.getNamespace(),
        "--lease-name", "jar-lease", "--leader-identity", "the-jar", "--install-crds").toArray(String[]::new));
    await().atMost(WAIT).ignoreExceptions()
        .failFast(() -> assertThat(p.isAlive()).as("stderr: %s", read(dir, "operator.err")).isTrue())
        .untilAsserted(() -> assertThat(OperatorRun.get(port, "/readyz").body()).isEqualTo("ok: leader\n"));
    assertThat(OperatorRun.get(port, "/metrics").body()).contains("jvm_memory_used_bytes")
        .containsPattern("operator_sdk_\\w+").contains("ipam_operator_leader 1.0");

    long signalled = System.nanoTime();
    p.destroy(); // SIGTERM
    assertThat(p.waitFor(40, TimeUnit.SECONDS)).as("exits after SIGTERM").isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - signalled)).isLessThan(Duration.ofSeconds(20));
    assertThat(p.exitValue()).isZero(); // as the help says: not 143 (128 + SIGTERM)
    String err = read(dir, "operator.err");
    assertThat(err).contains("stop signal received: stopping", "released Lease", "ipam operator stopped")
        .doesNotContain("\tat ", "Exception", "ERROR");
    assertThat(client.resources(Lease.class).withName("jar-lease").get().getSpec().getHolderIdentity()).isNull();
  }

  @Test
  void aKilledLeadersLeaseIsTakenOverWhenItExpires(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    int jarPort = LoopbackPorts.freePort();
    String[] timing = {"--lease-name", "killed-lease", "--lease-duration", "5s", "--renew-deadline", "4s",
        "--retry-period", "500ms"};
    List<String> jarArgs = OperatorRun.args(kubeconfig, jarPort, client.getNamespace(), timing);
    jarArgs.addAll(List.of("--leader-identity", "the-jar"));
    Process p = java(dir, "leader", jarArgs.toArray(String[]::new));
    await().atMost(WAIT).ignoreExceptions()
        .failFast(() -> assertThat(p.isAlive()).as("stderr: %s", read(dir, "leader.err")).isTrue())
        .untilAsserted(() -> assertThat(OperatorRun.get(jarPort, "/readyz").body()).isEqualTo("ok: leader\n"));

    int port = LoopbackPorts.freePort();
    List<String> args = OperatorRun.args(kubeconfig, port, client.getNamespace(), timing);
    args.addAll(List.of("--leader-identity", "the-standby"));
    standby = OperatorRun.start(args.toArray(String[]::new));
    standby.awaitReady(port, "ok: standby, leader is the-jar\n");

    p.destroyForcibly(); // SIGKILL: no hand-back
    long killed = System.nanoTime();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100))
        .until(() -> standby.command.isLeader());
    Duration takeover = Duration.ofNanos(System.nanoTime() - killed);
    assertThat(client.resources(Lease.class).withName("killed-lease").get().getSpec().getHolderIdentity())
        .isEqualTo("the-standby");
    // Not before the killed leader's lease ran out (5 s from its last renewal, at most 500 ms before the kill).
    assertThat(takeover).isBetween(Duration.ofMillis(4000), Duration.ofSeconds(10));
  }
}
