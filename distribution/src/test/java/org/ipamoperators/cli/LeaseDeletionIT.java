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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.core.audit.LedgerAudit;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leadership changes without a kill: two vip replicas (4 s leases) serve a burst of 120 LoadBalancer Services while
 * the test deletes the Lease at seeded moments, as an admin or a broken tool might. Both replicas race to create it
 * again; the old leader keeps reconciling until its renewal fails, so for a moment two processes may both act as
 * leader. A replica that loses leadership stops and exits 1; the test starts it again, as a kubelet would. At no
 * snapshot may an address be shown by two Services, none may change, and in the end every Service is served and the
 * audit finds nothing for the run's addresses. Seed: {@code -Dipam.reliability.seed}; deletions:
 * {@code -Dipam.reliability.kills} (3).
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class LeaseDeletionIT {
  private static final int DELETIONS = Integer.getInteger("ipam.reliability.kills", 3);
  private static final long SEED = Long.getLong("ipam.reliability.seed", System.nanoTime());
  private static final String PREFIX = "198.18.24.";
  private final List<Process> processes = new java.util.concurrent.CopyOnWriteArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (Process p : processes) {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void deletingTheLeaseMidBurstHandsOverWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.getBoolean("ipam.reliability.long"),
        "LeaseDeletionIT runs in the long reliability run (-Preliability): about 2 minutes");
    String ns = client.getNamespace();
    GenericKubernetesResource g = new GenericKubernetesResource();
    g.setApiVersion("paas.org/v1");
    g.setKind("IPGroup");
    g.setMetadata(new ObjectMetaBuilder().withName("lease-vips").build());
    g.setAdditionalProperty("spec", Map.of("segment", PREFIX + "0/24"));
    client.resource(g).create();
    Random random = new Random(SEED);
    int count = 120;
    System.out.printf("[lease-deletion] vip seed %d deletions %d objects %d%n", SEED, DELETIONS, count);
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    SnapshotCheck checks = new SnapshotCheck();
    AtomicBoolean watching = new AtomicBoolean(true);
    AtomicInteger taken = new AtomicInteger();
    Set<String> holders = java.util.Collections.synchronizedSet(new LinkedHashSet<>());
    List<String> holderChanges = java.util.Collections.synchronizedList(new ArrayList<>());
    Map<String, Process> running = new java.util.concurrent.ConcurrentHashMap<>();
    AtomicInteger restarts = new AtomicInteger();
    Thread watcher = new Thread(() -> {
      String last = null;
      while (watching.get()) {
        try {
          checks.check(shown(client, ns));
          taken.incrementAndGet();
          String holder = holder(client);
          if (holder != null && !holder.equals(last)) {
            holderChanges.add(holder);
            last = holder;
          }
          // The kubelet's part: a replica that lost leadership exited; start it again.
          for (Map.Entry<String, Process> e : running.entrySet()) {
            if (!e.getValue().isAlive()) {
              running.put(e.getKey(), replica(dir, kubeconfig, ns, e.getKey(), restarts.incrementAndGet()));
            }
          }
          Thread.sleep(100);
        } catch (InterruptedException e) {
          return;
        } catch (Exception e) {
          // the API server is busy: the next snapshot comes soon
        }
      }
    }, "lease-deletion-watcher");
    try {
      running.put("r0", replica(dir, kubeconfig, ns, "r0", 0));
      running.put("r1", replica(dir, kubeconfig, ns, "r1", 0));
      watcher.start();
      ExecutorService creators = Executors.newFixedThreadPool(4);
      for (int i = 0; i < count; i++) {
        int n = i;
        creators.submit(() -> client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata()
            .withName("lease-" + n).endMetadata().withNewSpec().withType("LoadBalancer")
            .withAllocateLoadBalancerNodePorts(false).addNewPort().withPort(80).withProtocol("TCP").endPort()
            .endSpec().build()).create());
      }
      creators.shutdown();
      for (int d = 1; d <= DELETIONS; d++) {
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200))
            .until(() -> holder(client) != null);
        Thread.sleep(300 + random.nextInt(2500));
        holders.add(holder(client));
        client.resources(Lease.class).withName(OperatorCommand.DEFAULT_LEASE).delete();
      }
      assertThat(creators.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
      Instant lastDeletion = Instant.now();
      await().atMost(Duration.ofSeconds(240)).pollInterval(Duration.ofMillis(500))
          .until(() -> shown(client, ns).size() == count);
      Duration converged = Duration.between(lastDeletion, Instant.now());
      watching.set(false);
      watcher.join(5_000);
      checks.check(shown(client, ns));

      List<Finding> findings = new ArrayList<>();
      try {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).until(() -> {
          ClusterFacts facts = ClusterFacts.read(client, Set.of("vip"));
          findings.clear();
          LedgerAudit.audit(facts.entries(), facts.publications(), new AuditOptions(Instant.now(), Duration.ZERO))
              .findings().stream().filter(f -> f.resource().value().startsWith(PREFIX)).forEach(findings::add);
          return findings.isEmpty();
        });
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        // asserted below, with what the audit saw last
      }
      String summary = String.format("seed %d, %d Lease deletions (holders %s), leadership seen %s, %d replica "
          + "restarts after losing the Lease, %d snapshots, converged %d ms after the last deletion", SEED, DELETIONS,
          holders, holderChanges, restarts.get(), taken.get(), converged.toMillis());
      System.out.println("[lease-deletion] " + summary);
      assertThat(checks.duplicates()).as(summary).isEmpty();
      assertThat(checks.changed()).as(summary).isEmpty();
      assertThat(findings).as(summary).isEmpty();
    } finally {
      watching.set(false);
      ReliabilityCleanup.services(client, ns);
      client.resources(org.ipamoperators.vip.api.IPGroup.class).withName("lease-vips").delete();
    }
  }

  private Process replica(Path dir, Path kubeconfig, String ns, String identity, int life) throws Exception {
    List<String> args = new ArrayList<>(List.of("operator", "--controllers", "vip", "--kubeconfig",
        kubeconfig.toString(), "--http-port", Integer.toString(LoopbackPorts.freePort()), "--bind-address",
        "127.0.0.1", "--namespace", ns));
    args.addAll(OperatorProcess.replica(identity));
    Process p = OperatorProcess.start(dir, identity + "-" + life, args, Map.of());
    processes.add(p);
    return p;
  }

  private static String holder(KubernetesClient client) {
    Lease lease = client.resources(Lease.class).withName(OperatorCommand.DEFAULT_LEASE).get();
    return lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
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
