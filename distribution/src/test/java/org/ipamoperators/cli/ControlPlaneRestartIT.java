package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Service;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.core.audit.LedgerAudit;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.crds.CrdInstaller;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control plane itself goes down mid-burst: kube-apiserver is stopped (SIGTERM, its graceful shutdown) and
 * started again while namespaces and Services arrive, then etcd is SIGKILLed and started again on its data.
 * The egressip and vip controllers run in one operator process against an apiserver of this test's own
 * ({@link KubeApiServer#startPrivate()}). Nothing may be shown on two owners at any moment, no owner's address
 * may change, everything is served in the end without restarting the operator, and the audit finds nothing.
 */
class ControlPlaneRestartIT {

  @Test
  void survivesAnApiserverRestartAndAnEtcdKillMidBurst(@TempDir Path dir) throws Exception {
    KubeApiServer server = KubeApiServer.startPrivate();
    try (KubernetesClient client = server.newClient()) {
      CrdInstaller.install(client, "META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
          "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
          "META-INF/fabric8/ipgroups.paas.org-v1.yml", "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml");
      String ns = "restart-vips";
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      GenericKubernetesResource g = new GenericKubernetesResource();
      g.setApiVersion("paas.org/v1");
      g.setKind("IPGroup");
      g.setMetadata(new ObjectMetaBuilder().withName("restart-vips").build());
      g.setAdditionalProperty("spec", Map.of("segment", "198.18.15.0/24"));
      client.resource(g).create();
      client.nodes().resource(new NodeBuilder().withNewMetadata().withName("restart-w1")
          .addToLabels("restart-zone", "a").endMetadata().build()).create();
      EgressIPAM ipam = new EgressIPAM();
      ObjectMeta meta = new ObjectMeta();
      meta.setName("restart");
      ipam.setMetadata(meta);
      ipam.setSpec(new EgressIPAMSpec(List.of(new CIDRAssignment("198.18.16.0/24", "a", null)), "restart-zone",
          new LabelSelectorBuilder().build(), null, null, null));
      client.resource(ipam).create();

      Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
      int port = LoopbackPorts.freePort();
      int perPhase = 30;
      try (OperatorRun run = OperatorRun.start("operator", "--controllers", "egressip,vip", "--kubeconfig",
          kubeconfig.toString(), "--http-port", Integer.toString(port), "--bind-address", "127.0.0.1",
          "--namespace", ns, "--no-leader-election")) {
        run.awaitReady(port, "ok\n");
        SnapshotCheck snapshots = new SnapshotCheck();
        SnapshotWatcher watcher = SnapshotWatcher.start("restart-watcher", snapshots, () -> shown(client, ns));

        burst(client, ns, 0, perPhase);
        Duration apiserverDown = server.restartApiServer();
        burst(client, ns, perPhase, perPhase);
        Duration etcdDown = server.killEtcd();
        burst(client, ns, 2 * perPhase, perPhase);

        Instant start = Instant.now();
        int expected = 3 * perPhase * 2;
        await().atMost(Duration.ofSeconds(240)).pollInterval(Duration.ofSeconds(1)).failFast(run::assertRunning)
            .until(() -> shown(client, ns).size() == expected);
        Duration converged = Duration.between(start, Instant.now());
        watcher.stop();
        snapshots.check(shown(client, ns));

        List<Finding> findings = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).until(() -> {
          ClusterFacts facts = ClusterFacts.read(client, Set.of("egressip", "vip"));
          findings.clear();
          findings.addAll(LedgerAudit.audit(facts.entries(), facts.publications(),
              new AuditOptions(Instant.now(), Duration.ZERO)).findings());
          return findings.isEmpty();
        });
        String summary = String.format("apiserver down %d ms, etcd down %d ms, %d snapshots, converged %d ms "
            + "after the last create", apiserverDown.toMillis(), etcdDown.toMillis(), watcher.taken(),
            converged.toMillis());
        System.out.println("[control-plane-restart] " + summary);
        assertThat(snapshots.duplicates()).as(summary).isEmpty();
        assertThat(snapshots.changed()).as(summary).isEmpty();
        assertThat(findings).as(summary).isEmpty();
        run.assertRunning();
      }
    } finally {
      server.stop();
    }
  }

  /** {@code count} Services and {@code count} opted-in namespaces, 4 threads; a create that meets the outage retries. */
  private static void burst(KubernetesClient client, String ns, int from, int count) throws InterruptedException {
    ExecutorService creators = Executors.newFixedThreadPool(4);
    for (int i = from; i < from + count; i++) {
      int n = i;
      creators.submit(() -> ControlPlaneBurst.retry(() -> client.services().inNamespace(ns).resource(new ServiceBuilder()
          .withNewMetadata().withName("restart-" + n).endMetadata().withNewSpec().withType("LoadBalancer")
          .withAllocateLoadBalancerNodePorts(false).addNewPort().withPort(80).withProtocol("TCP").endPort()
          .endSpec().build()).create()));
      creators.submit(() -> ControlPlaneBurst.retry(() -> client.namespaces().resource(new NamespaceBuilder().withNewMetadata()
          .withName("restart-ns" + n).addToLabels("burst", "restart")
          .addToAnnotations(EgressAnnotations.EGRESSIPAM, "restart").endMetadata().build())
          .create()));
    }
    creators.shutdown();
    assertThat(creators.awaitTermination(3, TimeUnit.MINUTES)).isTrue();
  }

  private static Map<String, List<String>> shown(KubernetesClient client, String ns) {
    Map<String, List<String>> out = new HashMap<>();
    for (Service s : client.services().inNamespace(ns).list().getItems()) {
      if (s.getStatus() != null && s.getStatus().getLoadBalancer() != null
          && s.getStatus().getLoadBalancer().getIngress() != null
          && !s.getStatus().getLoadBalancer().getIngress().isEmpty()) {
        out.put("svc/" + s.getMetadata().getName(), s.getStatus().getLoadBalancer().getIngress().stream()
            .map(LoadBalancerIngress::getIp).toList());
      }
    }
    for (Namespace n : client.namespaces().withLabel("burst", "restart").list().getItems()) {
      Map<String, String> a = n.getMetadata().getAnnotations();
      String ips = a == null ? null : a.get(EgressAnnotations.EGRESSIPS);
      if (ips != null && !ips.isBlank()) {
        out.put("ns/" + n.getMetadata().getName(), List.of(ips.split(",")));
      }
    }
    return out;
  }
}
