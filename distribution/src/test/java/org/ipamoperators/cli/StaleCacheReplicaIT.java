package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.core.audit.LedgerAudit;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.kube.ApiFaultProxy;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two vip replicas; the standby reaches the apiserver through a proxy that silences every watch, so its caches
 * hear nothing after their first list. The fresh leader serves a burst and is SIGKILLed; the stale replica leads
 * while Services are deleted, turned into ClusterIP Services and created, all unseen by it; then its watches come
 * back. At no moment may an address be shown by two Services, no Service's address may change, and in the end
 * every LoadBalancer Service is served and the audit finds nothing.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class StaleCacheReplicaIT {
  private static final String PREFIX = "198.18.19.";
  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (Process p : processes) {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void aReplicaWithAStaleCacheLeadsWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    String ns = client.getNamespace();
    GenericKubernetesResource g = new GenericKubernetesResource();
    g.setApiVersion("paas.org/v1");
    g.setKind("IPGroup");
    g.setMetadata(new ObjectMetaBuilder().withName("stale-vips").build());
    g.setAdditionalProperty("spec", Map.of("segment", PREFIX + "0/24"));
    client.resource(g).create();
    SnapshotCheck checks = new SnapshotCheck();
    AtomicBoolean watching = new AtomicBoolean(true);
    Thread watcher = new Thread(() -> {
      while (watching.get()) {
        try {
          checks.check(shown(client, ns));
          Thread.sleep(100);
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException e) {
          // next snapshot
        }
      }
    }, "stale-cache-watcher");
    try (ApiFaultProxy proxy = new ApiFaultProxy(server, 1L)) {
      proxy.silenceWatches(true);
      Process fresh = replica(dir, OperatorRun.writeKubeconfig(dir, server.kubeconfig()), ns, "fresh");
      awaitLeader(client, "fresh");
      replica(dir, OperatorRun.writeKubeconfig(dir, proxy.kubeconfig()), ns, "stale");
      watcher.start();
      for (int i = 0; i < 30; i++) {
        create(client, ns, "stale-" + i);
      }
      await().atMost(Duration.ofSeconds(120)).until(() -> shown(client, ns).size() == 30);

      fresh.destroyForcibly(); // SIGKILL: the stale replica takes the Lease when it expires
      assertThat(fresh.waitFor(30, TimeUnit.SECONDS)).isTrue();
      awaitLeader(client, "stale");
      for (int i = 0; i < 10; i++) {
        client.services().inNamespace(ns).withName("stale-" + i).delete();
      }
      for (int i = 10; i < 20; i++) {
        client.services().inNamespace(ns).withName("stale-" + i).edit(s -> new ServiceBuilder(s).editSpec()
            .withType("ClusterIP").endSpec().build());
      }
      for (int i = 30; i < 40; i++) {
        create(client, ns, "stale-" + i);
      }
      Thread.sleep(10_000); // the stale leader runs on what it last heard (its own writes, periodic passes)
      proxy.silenceWatches(false);

      Instant healed = Instant.now();
      await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(500))
          .until(() -> shown(client, ns).size() == 20);
      Duration converged = Duration.between(healed, Instant.now());
      watching.set(false);
      watcher.join(5_000);
      checks.check(shown(client, ns));
      List<Finding> findings = new ArrayList<>();
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).until(() -> {
        ClusterFacts facts = ClusterFacts.read(client, Set.of("vip"));
        findings.clear();
        LedgerAudit.audit(facts.entries(), facts.publications(), new AuditOptions(Instant.now(), Duration.ZERO))
            .findings().stream().filter(f -> f.resource().value().startsWith(PREFIX)).forEach(findings::add);
        return findings.isEmpty();
      });
      String summary = "converged " + converged.toMillis() + " ms after the watches came back";
      System.out.println("[stale-cache] " + summary);
      assertThat(checks.duplicates()).as(summary).isEmpty();
      assertThat(checks.changed()).as(summary).isEmpty();
      assertThat(findings).as(summary).isEmpty();
    } finally {
      watching.set(false);
      ReliabilityCleanup.services(client, ns);
      client.resources(org.ipamoperators.vip.api.IPGroup.class).withName("stale-vips").delete();
    }
  }

  private static void create(KubernetesClient client, String ns, String name) {
    client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName(name).endMetadata()
        .withNewSpec().withType("LoadBalancer").withAllocateLoadBalancerNodePorts(false).addNewPort().withPort(80)
        .withProtocol("TCP").endPort().endSpec().build()).create();
  }

  private Process replica(Path dir, Path kubeconfig, String ns, String identity) throws Exception {
    List<String> args = new ArrayList<>(List.of("operator", "--controllers", "vip", "--kubeconfig",
        kubeconfig.toString(), "--http-port", Integer.toString(LoopbackPorts.freePort()), "--bind-address",
        "127.0.0.1", "--namespace", ns));
    args.addAll(OperatorProcess.replica(identity));
    Process p = OperatorProcess.start(dir, identity, args, Map.of());
    processes.add(p);
    return p;
  }

  private static void awaitLeader(KubernetesClient client, String identity) {
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
      Lease lease = client.resources(Lease.class).withName(OperatorCommand.DEFAULT_LEASE).get();
      return lease != null && lease.getSpec() != null && identity.equals(lease.getSpec().getHolderIdentity());
    });
  }

  private static Map<String, List<String>> shown(KubernetesClient client, String ns) {
    Map<String, List<String>> out = new HashMap<>();
    for (Service s : client.services().inNamespace(ns).list().getItems()) {
      if (s.getStatus() != null && s.getStatus().getLoadBalancer() != null
          && s.getStatus().getLoadBalancer().getIngress() != null
          && !s.getStatus().getLoadBalancer().getIngress().isEmpty()) {
        out.put(s.getMetadata().getName(), s.getStatus().getLoadBalancer().getIngress().stream()
            .map(LoadBalancerIngress::getIp).toList());
      }
    }
    return out;
  }
}
