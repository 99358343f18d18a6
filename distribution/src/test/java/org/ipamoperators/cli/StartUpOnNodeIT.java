package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.testsupport.node.RealNode;
import org.ipamoperators.testsupport.node.RealNodeTest;
import org.junit.jupiter.api.Test;

/**
 * Start-up of each controller image on the real kubelet, one controller at a time (one replica, so that JVMs do not
 * compete for the cores): from the Deployment's creation (helm install) to the container's start (scheduling, sandbox,
 * image unpacking), from the container's start (JVM start) to the operator's "caches synced" log line, and to the
 * pod's Ready condition (the kubelet's readiness probe). Prints a table for docs/benchmarks.md and checks only what
 * must hold: every stage happened, in order, with no restart.
 */
@RealNodeTest(imageProperties = {"ipam.image.egressip", "ipam.image.vip", "ipam.image.keepalived"})
class StartUpOnNodeIT {
  private static final int ROUNDS = Integer.getInteger("ipam.startup.rounds", 2);

  record Sample(String controller, int round, Duration created, Duration toSynced, Duration toReady,
      Duration deploymentReady) {
  }

  @Test
  void eachControllerImageStartsOnTheKubelet(RealNode node) throws Exception {
    KubernetesClient admin = node.adminClient();
    List<Sample> samples = new ArrayList<>();
    for (int round = 1; round <= ROUNDS; round++) {
      for (String controller : List.of("egressip", "vip", "keepalived")) {
        ChartOnNode.install(node, List.of(controller), Map.of("replicas", 1));
        try {
          Pod pod = ChartOnNode.awaitReady(admin, controller).get(0);
          Deployment d = admin.apps().deployments().inNamespace(ChartOnNode.NAMESPACE)
              .withName(ChartOnNode.RELEASE + "-" + controller).get();
          assertThat(pod.getStatus().getContainerStatuses().get(0).getRestartCount()).isZero();
          Instant created = Instant.parse(d.getMetadata().getCreationTimestamp());
          Instant started = Instant.parse(pod.getStatus().getContainerStatuses().get(0).getState().getRunning()
              .getStartedAt());
          Instant ready = Instant.parse(pod.getStatus().getConditions().stream()
              .filter(c -> "Ready".equals(c.getType())).findFirst().orElseThrow().getLastTransitionTime());
          String log = admin.pods().inNamespace(ChartOnNode.NAMESPACE).withName(pod.getMetadata().getName()).getLog();
          String synced = log.lines().filter(l -> l.contains("ipam operator started: caches synced")).findFirst()
              .orElseThrow(() -> new AssertionError("no 'caches synced' line in:\n" + log));
          Instant syncedAt = OffsetDateTime.parse(synced.substring(0, synced.indexOf(' '))).toInstant();
          // The kubelet's times have whole seconds: synced may print up to a second "before" the start.
          assertThat(syncedAt).isAfter(started.minusSeconds(1));
          assertThat(ready).isAfterOrEqualTo(started).isAfterOrEqualTo(created);
          samples.add(new Sample(controller, round, Duration.between(created, started),
              Duration.between(started, syncedAt), Duration.between(started, ready), Duration.between(created, ready)));
        } finally {
          ChartOnNode.uninstall(node);
          await().atMost(Duration.ofMinutes(2)).until(() -> ChartOnNode.pods(admin, controller).isEmpty());
        }
      }
    }
    StringBuilder table = new StringBuilder(String.format(
        "| controller | round | created → container start | JVM start → caches synced | JVM start → Ready | "
            + "Deployment created → Ready |%n|---|---|---|---|---|---|%n"));
    for (Sample s : samples) {
      table.append(String.format("| %s | %d | %.1f s | %.1f s | %.0f s | %.0f s |%n", s.controller(), s.round(),
          s.created().toMillis() / 1000.0, s.toSynced().toMillis() / 1000.0, s.toReady().toMillis() / 1000.0,
          s.deploymentReady().toMillis() / 1000.0));
    }
    table.append("load average at the end: ").append(Files.readString(Path.of("/proc/loadavg")).strip());
    System.out.println(table);
    Files.writeString(Path.of("target", "startup-on-node.md"), table);
    assertThat(samples).hasSize(3 * ROUNDS);
  }
}
