package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ipam operator --controllers egressip} against the real apiserver: probes, metrics, stop. */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"})
class OperatorIT {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private String node;

  @AfterEach
  void deleteNode(KubernetesClient client) {
    if (node != null) {
      client.nodes().withName(node).delete();
    }
  }

  @Test
  void servesProbesAndMetricsAndStopsCleanly(KubeApiServer server, KubernetesClient client, @TempDir Path dir)
      throws Exception {
    String ns = client.getNamespace();
    int port = LoopbackPorts.freePort();
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    OperatorRun run = OperatorRun.start(OperatorRun.args(kubeconfig, port, ns, "--lease-name", "probe-test")
        .toArray(String[]::new));
    try {
      run.awaitReady(port, "ok: leader\n");
      assertThat(OperatorRun.get(port, "/healthz")).isEqualTo(new OperatorRun.Response(200, "ok\n"));
      Lease lease = client.resources(Lease.class).inNamespace(ns).withName("probe-test").get();
      assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(run.command.identity());

      node = "probe-" + Long.toHexString(System.nanoTime() & 0xffffff);
      EgressFixtures.readyNode(client, node, Map.of("egress-zone", "a"));
      EgressFixtures.egressIpam(client, "probe-ipam", "192.0.2.0/28", "egress-zone", "a");

      await().atMost(WAIT).failFast(run::assertRunning).untilAsserted(() -> {
        String metrics = OperatorRun.get(port, "/metrics").body();
        assertThat(metrics)
            .contains("ipam_egressip_cidr_capacity{cidr=\"192.0.2.0/28\",egressipam=\"probe-ipam\"}")
            .contains("ipam_egressip_cidr_free{")
            .contains("ipam_egressip_ip_capacity{egressipam=\"probe-ipam\",node=\"" + node + "\"} +Inf")
            .contains("ipam_egressip_ip_allocated{egressipam=\"probe-ipam\",node=\"" + node + "\"}")
            .as("the old operator's names, which its alerts use")
            .containsPattern("(?m)^egressip_ip_capacity\\{egressipam=\"probe-ipam\",node=\"" + node + "\"} \\+Inf")
            .containsPattern("(?m)^egressip_ip_allocated\\{egressipam=\"probe-ipam\",node=\"" + node + "\"}")
            .contains("ipam_operator_leader 1.0")
            .contains("jvm_memory_used_bytes")
            .containsPattern("operator_sdk_\\w+");
      });
      OperatorRun.Response metrics = OperatorRun.get(port, "/metrics");
      assertThat(metrics.status()).isEqualTo(200);
      ExportedMetrics.assertServed("egressip", metrics.body());
      assertThat(OperatorRun.get(port, "/nothing").status()).isEqualTo(404);
    } finally {
      run.close();
    }
    assertThat(OperatorRun.statusOrRefused(port, "/healthz")).as("HTTP is closed after stop").isEqualTo(-1);
    Lease lease = client.resources(Lease.class).inNamespace(ns).withName("probe-test").get();
    assertThat(lease.getSpec().getHolderIdentity()).as("the Lease is handed back").isNull();
    assertThat(run.err()).isEmpty();
  }

  @Test
  void withoutLeaderElectionItReconcilesAndWritesNoLease(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    String ns = client.getNamespace();
    int port = LoopbackPorts.freePort();
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    try (OperatorRun run = OperatorRun.start(OperatorRun.args(kubeconfig, port, ns, "--no-leader-election")
        .toArray(String[]::new))) {
      run.awaitReady(port, "ok\n");
      EgressFixtures.egressIpam(client, "solo", "198.51.100.0/29", "egress-zone", "a");
      await().atMost(WAIT).failFast(run::assertRunning)
          .untilAsserted(() -> assertThat(OperatorRun.get(port, "/metrics").body())
          .contains("ipam_egressip_cidr_capacity{cidr=\"198.51.100.0/29\",egressipam=\"solo\"}")
          .contains("ipam_operator_leader 0.0"));
      assertThat(client.resources(Lease.class).inNamespace(ns).list().getItems()).isEmpty();
    }
  }

  @Test
  void missingLeaseNamespaceIsOneLine(KubeApiServer server, @TempDir Path dir) throws Exception {
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    OperatorRun run = OperatorRun.start(OperatorRun.args(kubeconfig, 0, "no-such-namespace").toArray(String[]::new));
    assertThat(run.awaitExit(WAIT)).isEqualTo(1);
    assertThat(run.err().lines().toList()).isEqualTo(List.of("ipam operator: the namespace no-such-namespace "
        + "for the leader-election Lease does not exist (create it, or choose another with --namespace)"));
  }
}
