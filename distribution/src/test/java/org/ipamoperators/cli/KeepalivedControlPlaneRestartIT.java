package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.core.audit.LedgerAudit;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.crds.CrdInstaller;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ControlPlaneRestartIT} for keepalived: two KeepalivedGroups sharing one router-id space, Services of both
 * arriving in three bursts, kube-apiserver stopped (SIGTERM) and started again after the first, etcd SIGKILLed and
 * started again on its data after the second. The operator runs on throughout. Each VIP's router id is the resource:
 * never on two VIPs at any snapshot, never changed once shown; in the end every VIP has one and the audit (router
 * ids and the groups' metrics ports) finds nothing.
 */
class KeepalivedControlPlaneRestartIT {

  @Test
  void routerIdsSurviveAnApiserverRestartAndAnEtcdKillMidBurst(@TempDir Path dir) throws Exception {
    KubeApiServer server = KubeApiServer.startPrivate();
    try (KubernetesClient client = server.newClient()) {
      CrdInstaller.install(client, "META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
          "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
          "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
          "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml");
      String ns = "restart-ka";
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      client.nodes().resource(new NodeBuilder().withNewMetadata().withName("restart-k1")
          .addToLabels("restart-keepalived", "yes").endMetadata().build()).create();
      List<String> groups = List.of("restart-ka", "restart-kb");
      for (String name : groups) {
        KeepalivedGroup g = new KeepalivedGroup();
        ObjectMeta meta = new ObjectMeta();
        meta.setName(name);
        meta.setNamespace(ns);
        g.setMetadata(meta);
        g.setSpec(new KeepalivedGroupSpec(null, "eth0", null, Map.of("restart-keepalived", "yes"), null, null, null,
            null, null, null, null, null, null, null, null, null, null, null, null, null));
        client.resource(g).create();
      }

      Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
      int port = LoopbackPorts.freePort();
      int perPhase = 20;
      try (OperatorRun run = OperatorRun.start("operator", "--controllers", "keepalived", "--kubeconfig",
          kubeconfig.toString(), "--http-port", Integer.toString(port), "--bind-address", "127.0.0.1",
          "--namespace", ns, "--no-leader-election")) {
        run.awaitReady(port, "ok\n");
        SnapshotCheck snapshots = new SnapshotCheck();
        SnapshotWatcher watcher = SnapshotWatcher.start("keepalived-restart-watcher", snapshots,
            () -> shown(client, ns, groups));

        java.util.function.IntConsumer create = i -> client.services().inNamespace(ns).resource(new ServiceBuilder()
            .withNewMetadata().withName("restart-k" + i)
            .addToAnnotations(KeepalivedAnnotations.GROUP, ns + "/" + groups.get(i % 2)).endMetadata()
            .withNewSpec().withType("ClusterIP").withExternalIPs("198.18.21." + (i + 1))
            .addNewPort().withPort(80).withProtocol("TCP").endPort().endSpec().build()).create();
        ControlPlaneBurst.burst(0, perPhase, create);
        Duration apiserverDown = server.restartApiServer();
        ControlPlaneBurst.burst(perPhase, perPhase, create);
        Duration etcdDown = server.killEtcd();
        ControlPlaneBurst.burst(2 * perPhase, perPhase, create);

        Instant start = Instant.now();
        int expected = 3 * perPhase;
        await().atMost(Duration.ofSeconds(240)).pollInterval(Duration.ofSeconds(1)).failFast(run::assertRunning)
            .until(() -> shown(client, ns, groups).size() == expected);
        Duration converged = Duration.between(start, Instant.now());
        watcher.stop();
        snapshots.check(shown(client, ns, groups));

        List<Finding> findings = new ArrayList<>();
        try {
          await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).until(() -> {
            ClusterFacts facts = ClusterFacts.read(client, Set.of("keepalived"));
            findings.clear();
            findings.addAll(LedgerAudit.audit(facts.entries(), facts.publications(),
                new AuditOptions(Instant.now(), Duration.ZERO)).findings());
            return findings.isEmpty();
          });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
          // asserted below, with what the audit saw last
        }
        String summary = String.format("apiserver down %d ms, etcd down %d ms, %d snapshots, %d router ids, "
            + "converged %d ms after the last create", apiserverDown.toMillis(), etcdDown.toMillis(), watcher.taken(),
            expected, converged.toMillis());
        System.out.println("[control-plane-restart] keepalived " + summary);
        assertThat(snapshots.duplicates()).as(summary).isEmpty();
        assertThat(snapshots.changed()).as(summary).isEmpty();
        assertThat(findings).as(summary).isEmpty();
        run.assertRunning();
      }
    } finally {
      server.stop();
    }
  }

  /** VIP (group/instance key) to its router id, as the groups' status shows them. */
  private static Map<String, List<String>> shown(KubernetesClient client, String ns, List<String> groups) {
    Map<String, List<String>> out = new HashMap<>();
    for (String name : groups) {
      KeepalivedGroup g = client.resources(KeepalivedGroup.class).inNamespace(ns).withName(name).get();
      if (g != null && g.getStatus() != null && g.getStatus().routerIDs() != null) {
        g.getStatus().routerIDs().forEach((vip, id) ->
            out.computeIfAbsent(name + "/" + vip, k -> new ArrayList<>()).add("router-id " + id));
      }
    }
    return out;
  }
}
