package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.testsupport.kube.ApiFaultProxy;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
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
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE})
class StaleCacheControllersIT {
  private static final String EGRESS_PREFIX = "198.18.22.";
  private final Replicas replicas = new Replicas();

  @AfterEach
  void stop() throws Exception {
    replicas.close();
  }

  /** What the stale run needs from a controller's test. */
  private record Scenario(String controller, java.util.function.IntConsumer create, Runnable changeUnseen,
      Supplier<Map<String, List<String>>> shown, Set<String> servedInTheEnd, Predicate<Finding> ours, String range) {}

  @org.junit.jupiter.api.BeforeEach
  void longRunOnly() {
    org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.getBoolean("ipam.reliability.long"),
        "StaleCacheControllersIT runs in the long reliability run (-Preliability): 75-160 s per test");
  }

  @Test
  void egressReplicaWithAStaleCacheLeadsWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    ReliabilityFixtures.egressIpam(client, "stale", EGRESS_PREFIX + "0/24", "stale-w1", "stale-zone");
    try {
      staleRun(server, client, dir, new Scenario("egressip",
          i -> ReliabilityFixtures.optedInNamespace(client, "stale-ns" + i, "stale", "stale"),
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
          () -> Shown.egressIps(client, "burst", "stale", ""),
          IntStream.range(20, 40).mapToObj(i -> "stale-ns" + i).collect(Collectors.toSet()),
          LedgerFindings.onResources(EGRESS_PREFIX), EGRESS_PREFIX));
    } finally {
      client.resources(EgressIPAM.class).withName("stale").delete();
      ReliabilityFixtures.deleteEgressNode(client, "stale-w1");
      ReliabilityCleanup.namespaces(client, "burst", "stale");
    }
  }

  @Test
  void keepalivedReplicaWithAStaleCacheLeadsWithoutADuplicateRouterId(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    String ns = client.getNamespace();
    List<String> groups = List.of("stale-ka", "stale-kb");
    ReliabilityFixtures.keepalivedGroups(client, ns, "stale-k1", "stale-keepalived", groups);
    try {
      staleRun(server, client, dir, new Scenario("keepalived",
          i -> ReliabilityFixtures.keepalivedService(client, ns, "stale-k" + i, groups.get(i % 2),
              "198.18.23." + (i + 1)),
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
          () -> Shown.routerIds(client, ns, groups),
          IntStream.range(20, 40).mapToObj(i -> "stale-k" + i).collect(Collectors.toSet()),
          f -> f.parties().stream().anyMatch(p -> p.contains(ns + "/stale-k")), "198.18.23."));
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
    SnapshotWatcher watcher = null;
    try (ApiFaultProxy proxy = new ApiFaultProxy(server, 1L)) {
      proxy.silenceWatches(true);
      Process fresh = replicas.start(dir, OperatorRun.writeKubeconfig(dir, server.kubeconfig()), ns,
          s.controller(), "fresh", s.controller() + "-fresh");
      Replicas.awaitLeader(client, "fresh");
      replicas.start(dir, OperatorRun.writeKubeconfig(dir, proxy.kubeconfig()), ns, s.controller(), "stale",
          s.controller() + "-stale");
      watcher = SnapshotWatcher.start("stale-cache-watcher " + s.controller(), checks, s.shown(),
          Surfaces.forController(client, s.controller(), ns, s.range()), () -> {});
      for (int i = 0; i < 30; i++) {
        s.create().accept(i);
      }
      await().atMost(Duration.ofSeconds(120)).until(() -> s.shown().get().size() == 30);

      fresh.destroyForcibly(); // SIGKILL: the stale replica takes the Lease when it expires
      assertThat(fresh.waitFor(30, TimeUnit.SECONDS)).isTrue();
      Replicas.awaitLeader(client, "stale");
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
      watcher.stop();
      checks.check(s.shown().get());
      // A keepalived router id whose instance is gone is retired, not released, for the grace (90 s): the audit
      // reports it as a leak until then, so the keepalived run waits past the grace.
      Duration auditWait = s.controller().equals("keepalived")
          ? org.ipamoperators.keepalived.KeepalivedSettings.DEFAULT_ROUTER_ID_GRACE.plusSeconds(60)
          : Duration.ofSeconds(60);
      Instant auditStart = Instant.now();
      List<Finding> findings = LedgerFindings.settled(client, Set.of(s.controller()), s.ours(), auditWait);
      String summary = String.format("%s: %d snapshots, %d shown while the stale replica led, converged %d ms after "
          + "the watches came back, audit clean after %d ms%s", s.controller(), watcher.taken(), whileStale.size(),
          converged.toMillis(), Duration.between(auditStart, Instant.now()).toMillis(),
          findings.isEmpty() ? "" : "; IDClaims: " + idClaims(client));
      System.out.println("[stale-cache] " + summary);
      assertThat(checks.duplicates()).as(summary).isEmpty();
      assertThat(checks.changed()).as(summary).isEmpty();
      assertThat(findings).as(summary).isEmpty();
    } finally {
      if (watcher != null) {
        watcher.stop();
      }
    }
  }

  /** For a failure's message: each IDClaim with its labels (a retired one carries its retirement time). */
  private static String idClaims(KubernetesClient client) {
    return client.resources(org.ipamoperators.controller.common.ids.IDClaim.class).list().getItems().stream()
        .map(c -> c.getMetadata().getName() + " " + c.getSpec().purpose() + " created "
            + c.getMetadata().getCreationTimestamp() + " " + c.getMetadata().getLabels())
        .collect(Collectors.joining("; "));
  }

  /** Owner names: a keepalived key is {@code group/ns/service} or {@code group/ns/service/<ip>}. */
  private static Set<String> servedOwners(Map<String, List<String>> shown) {
    return shown.keySet().stream().map(k -> k.contains("/") ? k.split("/")[2] : k).collect(Collectors.toSet());
  }
}
