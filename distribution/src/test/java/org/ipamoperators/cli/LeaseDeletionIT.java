package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.ipamoperators.cli.operator.OperatorCommand;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.keepalived.KeepalivedSettings;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.ApiFaultProxy.Fault;
import org.ipamoperators.testsupport.kube.ApiFaultProxy;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leadership changes without a kill: two replicas (4 s leases) of one controller serve a burst while the test deletes
 * the Lease at seeded moments, as an admin or a broken tool might. Both replicas race to create it again; the old
 * leader keeps reconciling until its renewal fails, so for a moment two processes may both act as leader. A replica
 * that loses leadership stops and exits 1; the test starts it again, as a kubelet would. Run for vip (LoadBalancer
 * Services), egressip (opted-in namespaces) and keepalived (router ids of two groups' Services), each also with both
 * replicas reaching the apiserver through an {@link ApiFaultProxy} that injects seeded 409/429/500s, slow answers,
 * resets and watch cuts. At no snapshot may an address or router id be shown by two owners, none may change, and in
 * the end every owner is served and the audit finds nothing (no duplicate, leak, orphan or drift) for the run's
 * resources. Seed: {@code -Dipam.reliability.seed} (printed; drawn per test without one); deletions:
 * {@code -Dipam.reliability.kills} (3); fault rate {@code -Dipam.reliability.faultRate} (0.05); the replicas'
 * output is kept in {@code -Dipam.reliability.logDir} when given (else it goes with the test's temporary directory).
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml",
    "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE})
class LeaseDeletionIT {
  private static final int DELETIONS = Integer.getInteger("ipam.reliability.kills", 3);
  private static final Long GIVEN_SEED = Long.getLong("ipam.reliability.seed");
  /** Where the replicas' output goes when given (kept after the run, to read), else the test's temporary dir. */
  private static final Path LOG_DIR = System.getProperty("ipam.reliability.logDir") == null ? null
      : Path.of(System.getProperty("ipam.reliability.logDir"));
  private static final double RATE = Double.parseDouble(System.getProperty("ipam.reliability.faultRate", "0.05"));
  /** Replica restarts after a lost Lease, at most: beyond it something is flapping, and the run fails. */
  private static final int MAX_RESTARTS = 200;
  private final Replicas replicas = new Replicas();

  @BeforeEach
  void longRunOnly() {
    org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.getBoolean("ipam.reliability.long"),
        "LeaseDeletionIT runs in the long reliability run (-Preliability): 1-3 minutes per test");
  }

  @AfterEach
  void stop() throws Exception {
    replicas.close();
  }

  /**
   * What a Lease-deletion run needs from a controller's test: the controller, how many owners, how to make owner i,
   * what the cluster shows, which audit findings are the run's.
   */
  private record Scenario(String controller, int count, IntConsumer create,
      Supplier<Map<String, List<String>>> shown, Predicate<Finding> ours, String range) {}

  @Test
  void deletingTheLeaseMidBurstHandsOverWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    vip(server, client, dir, "lease-", "198.18.24.", false);
  }

  @Test
  void vipLeaseDeletionsUnderApiFaultsHandOverWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    vip(server, client, dir, "leasef-", "198.18.26.", true);
  }

  @Test
  void egressLeaseDeletionsHandOverWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    egress(server, client, dir, "lease-eg", "198.18.27.", false);
  }

  @Test
  void egressLeaseDeletionsUnderApiFaultsHandOverWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    egress(server, client, dir, "lease-egf", "198.18.28.", true);
  }

  @Test
  void keepalivedLeaseDeletionsHandOverWithoutADuplicateRouterId(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    keepalived(server, client, dir, "lease-k", "198.18.29.", false);
  }

  @Test
  void keepalivedLeaseDeletionsUnderApiFaultsHandOverWithoutADuplicateRouterId(KubeApiServer server,
      KubernetesClient client, @TempDir Path dir) throws Exception {
    keepalived(server, client, dir, "lease-kf", "198.18.30.", true);
  }

  private void vip(KubeApiServer server, KubernetesClient client, Path dir, String prefix, String addresses,
      boolean faults) throws Exception {
    String ns = client.getNamespace();
    String group = prefix + "vips";
    ReliabilityFixtures.ipGroup(client, group, addresses + "0/24");
    try {
      leaseRun(server, client, dir, faults, new Scenario("vip", 120,
          i -> ReliabilityFixtures.loadBalancer(client, ns, prefix + i),
          () -> Shown.loadBalancerIps(client, ns, ""), LedgerFindings.onResources(addresses), addresses));
    } finally {
      ReliabilityCleanup.services(client, ns);
      client.resources(org.ipamoperators.vip.api.IPGroup.class).withName(group).delete();
    }
  }

  private void egress(KubeApiServer server, KubernetesClient client, Path dir, String prefix, String addresses,
      boolean faults) throws Exception {
    ReliabilityFixtures.egressIpam(client, prefix, addresses + "0/24", prefix + "-w1", prefix + "-zone");
    try {
      leaseRun(server, client, dir, faults, new Scenario("egressip", 60,
          i -> ReliabilityFixtures.optedInNamespace(client, prefix + "-ns" + i, prefix, prefix),
          () -> Shown.egressIps(client, "burst", prefix, ""), LedgerFindings.onResources(addresses), addresses));
    } finally {
      ReliabilityCleanup.namespaces(client, "burst", prefix);
      client.resources(EgressIPAM.class).withName(prefix).delete();
      ReliabilityFixtures.deleteEgressNode(client, prefix + "-w1");
    }
  }

  private void keepalived(KubeApiServer server, KubernetesClient client, Path dir, String prefix, String addresses,
      boolean faults) throws Exception {
    String ns = client.getNamespace();
    List<String> groups = List.of(prefix + "a", prefix + "b");
    ReliabilityFixtures.keepalivedGroups(client, ns, prefix + "-n1", prefix + "-node", groups);
    try {
      // Two groups on one network share a router-id space: each VIP's router id is the resource.
      leaseRun(server, client, dir, faults, new Scenario("keepalived", 60,
          i -> ReliabilityFixtures.keepalivedService(client, ns, prefix + "-s" + i, groups.get(i % 2),
              addresses + (i + 1)),
          () -> Shown.routerIds(client, ns, groups),
          f -> f.parties().stream().anyMatch(p -> p.contains(ns + "/" + prefix + "-s")), addresses));
    } finally {
      ReliabilityCleanup.services(client, ns);
      for (String name : groups) {
        client.resources(KeepalivedGroup.class).inNamespace(ns).withName(name).delete();
      }
      client.nodes().withName(prefix + "-n1").delete();
    }
  }

  private void leaseRun(KubeApiServer server, KubernetesClient client, Path dir, boolean faults, Scenario s)
      throws Exception {
    String ns = client.getNamespace();
    long seed = GIVEN_SEED != null ? GIVEN_SEED : System.nanoTime();
    String label = s.controller() + (faults ? " under API faults" : "");
    System.out.printf("[lease-deletion] %s seed %d deletions %d objects %d%s%n", label, seed, DELETIONS, s.count(),
        faults ? String.format(" fault rate %.2f", RATE) : "");
    Random random = new Random(seed);
    try (ApiFaultProxy proxy = new ApiFaultProxy(server, seed)) {
      if (faults) {
        for (Fault f : List.of(Fault.THROTTLE, Fault.SERVER_ERROR, Fault.CONFLICT, Fault.SLOW, Fault.RESET)) {
          proxy.rate(f, RATE);
        }
        proxy.rate(Fault.WATCH_CUT, 0.5);
      } else {
        proxy.inject(false);
      }
      // The replicas talk through the proxy; the test's own reads and the Lease deletions go straight.
      Path kubeconfig = OperatorRun.writeKubeconfig(dir, faults ? proxy.kubeconfig() : server.kubeconfig());
      SnapshotCheck checks = new SnapshotCheck();
      Set<String> holders = java.util.Collections.synchronizedSet(new LinkedHashSet<>());
      List<String> holderChanges = java.util.Collections.synchronizedList(new ArrayList<>());
      Map<String, Process> running = new ConcurrentHashMap<>();
      AtomicInteger restarts = new AtomicInteger();
      String[] last = {null};
      Runnable kubelet = () -> {
        String holder = Replicas.holder(client);
        if (holder != null && !holder.equals(last[0])) {
          holderChanges.add(holder);
          last[0] = holder;
        }
        // The kubelet's part: a replica that lost leadership exited; start it again.
        for (Map.Entry<String, Process> e : running.entrySet()) {
          if (!e.getValue().isAlive() && restarts.get() < MAX_RESTARTS) {
            running.put(e.getKey(), start(dir, kubeconfig, ns, s.controller(), e.getKey(),
                restarts.incrementAndGet()));
          }
        }
      };
      client.resources(Lease.class).withName(OperatorCommand.DEFAULT_LEASE).delete(); // an earlier test's
      String[] identities = {s.controller() + "-r0", s.controller() + "-r1"};
      for (String identity : identities) {
        running.put(identity, start(dir, kubeconfig, ns, s.controller(), identity, 0));
      }
      SnapshotWatcher watcher = SnapshotWatcher.start("lease-deletion-watcher", checks, s.shown(),
          Surfaces.forController(client, s.controller(), ns, s.range()), kubelet);
      try {
        ExecutorService creators = Executors.newFixedThreadPool(4);
        for (int i = 0; i < s.count(); i++) {
          int n = i;
          creators.submit(() -> s.create().accept(n));
        }
        creators.shutdown();
        for (int d = 1; d <= DELETIONS; d++) {
          holders.add(Replicas.awaitLeaderAmong(client, Set.of(identities)));
          Thread.sleep(300 + random.nextInt(2500));
          client.resources(Lease.class).withName(OperatorCommand.DEFAULT_LEASE).delete();
        }
        assertThat(creators.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
        Instant lastDeletion = Instant.now();
        await().atMost(Duration.ofSeconds(240)).pollInterval(Duration.ofMillis(500))
            .until(() -> s.shown().get().size() == s.count());
        Duration converged = Duration.between(lastDeletion, Instant.now());
        watcher.stop();
        checks.check(s.shown().get());
        proxy.inject(false);
        // A keepalived router id given twice in a race is retired, not released, for the grace (90 s): the audit
        // reports it as a leak until then, so the keepalived run waits past the grace.
        Duration auditWait = s.controller().equals("keepalived")
            ? KeepalivedSettings.DEFAULT_ROUTER_ID_GRACE.plusSeconds(60) : Duration.ofSeconds(60);
        Instant auditStart = Instant.now();
        List<Finding> findings = LedgerFindings.settled(client, Set.of(s.controller()), s.ours(), auditWait);
        String summary = String.format("%s: seed %d, %d Lease deletions (holders %s), leadership seen %s, %d replica "
            + "restarts after losing the Lease, %d snapshots, converged %d ms after the last deletion, audit clean "
            + "after %d ms%s", label, seed, DELETIONS, holders, holderChanges, restarts.get(), watcher.taken(),
            converged.toMillis(), Duration.between(auditStart, Instant.now()).toMillis(),
            faults ? ", faults injected " + proxy.injected() + " of " + proxy.forwarded() + " requests" : "");
        System.out.println("[lease-deletion] " + summary);
        assertThat(checks.duplicates()).as(summary).isEmpty();
        assertThat(checks.changed()).as(summary).isEmpty();
        assertThat(findings).as(summary).isEmpty();
        assertThat(restarts.get()).as(summary).isLessThan(MAX_RESTARTS);
        if (faults) {
          assertThat(proxy.injected().values().stream().mapToLong(Long::longValue).sum()).as(summary).isPositive();
        }
      } finally {
        watcher.stop();
      }
    }
  }

  private Process start(Path dir, Path kubeconfig, String ns, String controller, String identity, int life) {
    try {
      return replicas.start(LOG_DIR != null ? LOG_DIR : dir, kubeconfig, ns, controller, identity,
          identity + "-" + life);
    } catch (Exception e) {
      throw new IllegalStateException("could not start replica " + identity, e);
    }
  }
}
