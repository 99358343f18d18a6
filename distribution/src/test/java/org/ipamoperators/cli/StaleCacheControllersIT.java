package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.core.audit.LedgerAudit;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.kube.ApiFaultProxy;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link StaleCacheReplicaIT} for egressip and keepalived. Two replicas; the standby reaches the apiserver through a
 * proxy that silences every watch, so its caches hear nothing after their first list. The fresh leader serves 30
 * owners and is SIGKILLed; the stale replica takes the Lease and leads for 10 s while 10 owners leave (deleted or
 * opted out), 10 opt out by annotation and 10 new ones arrive, all unseen by it; then its watches come back. At no
 * snapshot may a resource (egress address, router id) be shown by two owners, none may change, and in the end
 * exactly the remaining owners are served and the audit finds nothing for the run's resources.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml",
    "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"})
class StaleCacheControllersIT {
  private static final String EGRESS_PREFIX = "198.18.22.";
  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (Process p : processes) {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** What the stale run needs from a controller's test. */
  private record Scenario(String controller, java.util.function.IntConsumer create, Runnable changeUnseen,
      Supplier<Map<String, List<String>>> shown, Set<String> servedInTheEnd, Predicate<Finding> ours) {}

  @org.junit.jupiter.api.BeforeEach
  void longRunOnly() {
    org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.getBoolean("ipam.reliability.long"),
        "StaleCacheControllersIT runs in the long reliability run (-Preliability): 75-160 s per test");
  }

  @Test
  void egressReplicaWithAStaleCacheLeadsWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName("stale-w1")
        .addToLabels("stale-zone", "a").endMetadata().build()).create();
    EgressIPAM ipam = new EgressIPAM();
    ObjectMeta meta = new ObjectMeta();
    meta.setName("stale");
    ipam.setMetadata(meta);
    ipam.setSpec(new EgressIPAMSpec(List.of(new CIDRAssignment(EGRESS_PREFIX + "0/24", "a", null)), "stale-zone",
        new LabelSelectorBuilder().build(), null, null, null));
    client.resource(ipam).create();
    try {
      staleRun(server, client, dir, new Scenario("egressip",
          i -> client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("stale-ns" + i)
              .addToLabels("burst", "stale").addToAnnotations(EgressAnnotations.EGRESSIPAM, "stale").endMetadata()
              .build()).create(),
          () -> {
            // Namespaces 0-9 opt out (a deleted namespace stays Terminating here: no namespace controller runs),
            // 10-19 move their opt-in to an IPAM that does not exist, 30-39 arrive.
            for (int i = 0; i < 10; i++) {
              client.namespaces().withName("stale-ns" + i).edit(n -> {
                n.getMetadata().getAnnotations().remove(EgressAnnotations.EGRESSIPAM);
                return n;
              });
            }
            for (int i = 10; i < 20; i++) {
              client.namespaces().withName("stale-ns" + i).edit(n -> {
                n.getMetadata().getAnnotations().put(EgressAnnotations.EGRESSIPAM, "stale-elsewhere");
                return n;
              });
            }
          },
          () -> {
            Map<String, List<String>> out = new HashMap<>();
            for (Namespace n : client.namespaces().withLabel("burst", "stale").list().getItems()) {
              Map<String, String> a = n.getMetadata().getAnnotations();
              String ips = a == null ? null : a.get(EgressAnnotations.EGRESSIPS);
              if (ips != null && !ips.isBlank()) {
                out.put(n.getMetadata().getName(), List.of(ips.split(",")));
              }
            }
            return out;
          },
          IntStream.range(20, 40).mapToObj(i -> "stale-ns" + i).collect(Collectors.toSet()),
          f -> f.resource().value().startsWith(EGRESS_PREFIX)));
    } finally {
      client.resources(EgressIPAM.class).withName("stale").delete();
      client.nodes().withName("stale-w1").delete();
      ReliabilityCleanup.namespaces(client, "burst", "stale");
    }
  }

  @Test
  void keepalivedReplicaWithAStaleCacheLeadsWithoutADuplicateRouterId(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    String ns = client.getNamespace();
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName("stale-k1")
        .addToLabels("stale-keepalived", ns).endMetadata().build()).create();
    List<String> groups = List.of("stale-ka", "stale-kb");
    for (String name : groups) {
      KeepalivedGroup g = new KeepalivedGroup();
      ObjectMeta meta = new ObjectMeta();
      meta.setName(name);
      g.setMetadata(meta);
      g.setSpec(new KeepalivedGroupSpec(null, "eth0", null, Map.of("stale-keepalived", ns), null, null, null, null,
          null, null, null, null, null, null, null, null, null, null, null, null));
      client.resource(g).create();
    }
    try {
      staleRun(server, client, dir, new Scenario("keepalived",
          i -> client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata()
              .withName("stale-k" + i).addToAnnotations(KeepalivedAnnotations.GROUP, ns + "/" + groups.get(i % 2))
              .endMetadata().withNewSpec().withType("ClusterIP").withExternalIPs("198.18.23." + (i + 1))
              .addNewPort().withPort(80).withProtocol("TCP").endPort().endSpec().build()).create(),
          () -> {
            // Services 0-9 are deleted, 10-19 leave their group (annotation removed), 30-39 arrive.
            for (int i = 0; i < 10; i++) {
              client.services().inNamespace(ns).withName("stale-k" + i).delete();
            }
            for (int i = 10; i < 20; i++) {
              client.services().inNamespace(ns).withName("stale-k" + i).edit(s -> {
                s.getMetadata().getAnnotations().remove(KeepalivedAnnotations.GROUP);
                return s;
              });
            }
          },
          () -> {
            Map<String, List<String>> out = new HashMap<>();
            for (String name : groups) {
              KeepalivedGroup g = client.resources(KeepalivedGroup.class).inNamespace(ns).withName(name).get();
              if (g != null && g.getStatus() != null && g.getStatus().routerIDs() != null) {
                g.getStatus().routerIDs().forEach((vip, id) ->
                    out.computeIfAbsent(vip, k -> new ArrayList<>()).add("router-id " + id));
              }
            }
            return out;
          },
          IntStream.range(20, 40).mapToObj(i -> "stale-k" + i).collect(Collectors.toSet()),
          f -> f.parties().stream().anyMatch(p -> p.contains(ns + "/stale-k"))));
    } finally {
      ReliabilityCleanup.services(client, ns);
      for (String name : groups) {
        client.resources(KeepalivedGroup.class).inNamespace(ns).withName(name).delete();
      }
      client.nodes().withName("stale-k1").delete();
    }
  }

  private void staleRun(KubeApiServer server, KubernetesClient client, Path dir, Scenario s) throws Exception {
    String ns = client.getNamespace();
    SnapshotCheck checks = new SnapshotCheck();
    AtomicBoolean watching = new AtomicBoolean(true);
    AtomicInteger taken = new AtomicInteger();
    Thread watcher = new Thread(() -> {
      while (watching.get()) {
        try {
          checks.check(s.shown().get());
          taken.incrementAndGet();
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
      Process fresh = replica(dir, OperatorRun.writeKubeconfig(dir, server.kubeconfig()), ns, s.controller(),
          "fresh");
      awaitLeader(client, "fresh");
      replica(dir, OperatorRun.writeKubeconfig(dir, proxy.kubeconfig()), ns, s.controller(), "stale");
      watcher.start();
      for (int i = 0; i < 30; i++) {
        s.create().accept(i);
      }
      await().atMost(Duration.ofSeconds(120)).until(() -> s.shown().get().size() == 30);

      fresh.destroyForcibly(); // SIGKILL: the stale replica takes the Lease when it expires
      assertThat(fresh.waitFor(30, TimeUnit.SECONDS)).isTrue();
      awaitLeader(client, "stale");
      s.changeUnseen().run();
      for (int i = 30; i < 40; i++) {
        s.create().accept(i);
      }
      Thread.sleep(10_000); // the stale leader runs on what it last heard (its own writes, periodic passes)
      Map<String, List<String>> whileStale = s.shown().get();
      proxy.silenceWatches(false);

      Instant healed = Instant.now();
      await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(500))
          .until(() -> servedOwners(s.shown().get()).equals(s.servedInTheEnd()));
      Duration converged = Duration.between(healed, Instant.now());
      watching.set(false);
      watcher.join(5_000);
      checks.check(s.shown().get());
      List<Finding> findings = new ArrayList<>();
      // A keepalived router id whose instance is gone is retired, not released, for the grace (90 s): the audit
      // reports it as a leak until then, so the keepalived run waits past the grace.
      Duration auditWait = s.controller().equals("keepalived")
          ? org.ipamoperators.keepalived.KeepalivedSettings.DEFAULT_ROUTER_ID_GRACE.plusSeconds(60)
          : Duration.ofSeconds(60);
      Instant auditStart = Instant.now();
      try {
        await().atMost(auditWait).pollInterval(Duration.ofSeconds(1)).until(() -> {
          ClusterFacts facts = ClusterFacts.read(client, Set.of(s.controller()));
          findings.clear();
          LedgerAudit.audit(facts.entries(), facts.publications(), new AuditOptions(Instant.now(), Duration.ZERO))
              .findings().stream().filter(s.ours()).forEach(findings::add);
          return findings.isEmpty();
        });
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        // asserted below, with what the audit saw last
      }
      String summary = String.format("%s: %d snapshots, %d shown while the stale replica led, converged %d ms after "
          + "the watches came back, audit clean after %d ms%s", s.controller(), taken.get(), whileStale.size(),
          converged.toMillis(), Duration.between(auditStart, Instant.now()).toMillis(),
          findings.isEmpty() ? "" : "; IDClaims: " + idClaims(client));
      System.out.println("[stale-cache] " + summary);
      assertThat(checks.duplicates()).as(summary).isEmpty();
      assertThat(checks.changed()).as(summary).isEmpty();
      assertThat(findings).as(summary).isEmpty();
    } finally {
      watching.set(false);
    }
  }

  /** For a failure's message: each IDClaim with its labels (a retired one carries its retirement time). */
  private static String idClaims(KubernetesClient client) {
    return client.resources(org.ipamoperators.controller.common.ids.IDClaim.class).list().getItems().stream()
        .map(c -> c.getMetadata().getName() + " " + c.getSpec().purpose() + " created "
            + c.getMetadata().getCreationTimestamp() + " " + c.getMetadata().getLabels())
        .collect(Collectors.joining("; "));
  }

  /** Owner names: a keepalived instance key is {@code ns/service} or {@code ns/service/<ip>}. */
  private static Set<String> servedOwners(Map<String, List<String>> shown) {
    return shown.keySet().stream().map(k -> k.contains("/") ? k.split("/")[1] : k).collect(Collectors.toSet());
  }

  private Process replica(Path dir, Path kubeconfig, String ns, String controller, String identity)
      throws Exception {
    List<String> args = new ArrayList<>(List.of("operator", "--controllers", controller, "--kubeconfig",
        kubeconfig.toString(), "--http-port", Integer.toString(LoopbackPorts.freePort()), "--bind-address",
        "127.0.0.1", "--namespace", ns));
    args.addAll(OperatorProcess.replica(identity));
    Process p = OperatorProcess.start(dir, controller + "-" + identity, args, Map.of());
    processes.add(p);
    return p;
  }

  private static void awaitLeader(KubernetesClient client, String identity) {
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
      Lease lease = client.resources(Lease.class).withName(OperatorCommand.DEFAULT_LEASE).get();
      return lease != null && lease.getSpec() != null && identity.equals(lease.getSpec().getHolderIdentity());
    });
  }
}
