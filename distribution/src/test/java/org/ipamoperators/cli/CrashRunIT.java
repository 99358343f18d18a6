package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.core.audit.Finding;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash runs: the operator as its own process, SIGKILLed and started again several times while objects arrive in
 * waves, each kill after the operator is ready (caches synced) and a seeded moment into its work on a new wave; each
 * life must serve more owners than there were before it (or the burst is done). Throughout, every snapshot of what
 * the cluster shows (every publication surface of the controller, {@link Surfaces}) is checked for an address on
 * two owners and for an owner whose address changed; at
 * the end the audit must find nothing at all for the run's addresses (no duplicate, leak, orphan or
 * drift). The seed is printed and can be replayed with {@code -Dipam.reliability.seed}; the number of
 * kills per run is {@code -Dipam.reliability.kills} (3 by default). {@code -Dipam.reliability.seeds=N} (1 by
 * default) runs each test N times in a row, seeds {@code s, s+1, ...}, each printed; every run starts from a clean
 * ledger (the one before released everything before its operator was stopped). Addresses are data only
 * (198.18.10-11.0/24), no other test's, since the audit reads the whole shared apiserver.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml", "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml",
    "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE})
class CrashRunIT {
  private static final int KILLS = Integer.getInteger("ipam.reliability.kills", 3);
  private static final int SEEDS = Integer.getInteger("ipam.reliability.seeds", 1);
  /** A given seed is the first run's seed as printed; without one, each controller draws its own. */
  private static final Long GIVEN_SEED = Long.getLong("ipam.reliability.seed");
  private static final long DRAWN_SEED = System.nanoTime();
  private final Replicas replicas = new Replicas();

  @AfterEach
  void stop() throws Exception {
    replicas.close();
  }

  /** One crash run of a test, with its seed and the names its objects take. */
  private interface Run {
    void run(long seed, String prefix, Path dir) throws Exception;
  }

  /**
   * Runs {@code run} for each of the {@link #SEEDS} seeds: seed {@code s + k} for run k, objects named
   * {@code crash-} (the first run, as always) or {@code crash-s<k>-} (a namespace deleted by an earlier run stays
   * Terminating here: no namespace controller), logs in a directory per run. Between runs the last operator
   * stops.
   */
  private void eachSeed(String controller, Path dir, Run run) throws Exception {
    long first = GIVEN_SEED != null ? GIVEN_SEED : DRAWN_SEED ^ controller.hashCode();
    for (int k = 0; k < SEEDS; k++) {
      Path runDir = java.nio.file.Files.createDirectories(dir.resolve("seed-" + k));
      System.out.printf("[crash-run] %s run %d of %d%n", controller, k + 1, SEEDS);
      try {
        run.run(first + k, k == 0 ? "crash-" : "crash-s" + k + "-", runDir);
      } finally {
        stop();
      }
    }
  }

  /** What one run did, for the test's message and the reliability table. */
  record RunResult(String controller, int replicas, long seed, int objects, int kills, int snapshots,
      long meanSnapshotMillis, String surfaces, int duplicatesSeen, List<String> duplicates, int changedAssignments,
      List<Finding> findings, Duration converged, List<Life> lives) {}

  @Test
  void vipServicesSurviveSeededKillsWithoutADuplicateOrAChangedAddress(KubeApiServer server,
      KubernetesClient client, @TempDir Path dir) throws Exception {
    eachSeed("vip", dir, (seed, prefix, runDir) -> vip(server, client, runDir, 1, seed, prefix));
  }

  /** Two replicas with leader election; each kill hits the leader, so leadership changes mid-burst. */
  @Test
  void vipLeaderKilledMidBurstHandsOverWithoutADuplicate(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    eachSeed("vip", dir, (seed, prefix, runDir) -> vip(server, client, runDir, 2, seed, prefix));
  }

  private void vip(KubeApiServer server, KubernetesClient client, Path dir, int replicas, long seed, String prefix)
      throws Exception {
    String group = "crash-vips";
    ReliabilityFixtures.ipGroup(client, group, "198.18.10.0/24");
    String ns = client.getNamespace();
    int count = 120;
    try {
      RunResult r = crashRun(server, client, dir, "vip", replicas, seed, count,
          i -> ReliabilityFixtures.loadBalancer(client, ns, prefix + i),
          () -> Shown.loadBalancerIps(client, ns, ""),
          Surfaces.vip(client, ns, ip -> ip.startsWith("198.18.10.")), ip -> ip.startsWith("198.18.10."));
      assertClean(r);
    } finally {
      ReliabilityCleanup.services(client, ns);
      client.resources(org.ipamoperators.vip.api.IPGroup.class).withName(group).delete();
      awaitReleased(client, "vip", ip -> ip.startsWith("198.18.10."));
      awaitGone(() -> client.resources(org.ipamoperators.vip.api.IPGroup.class).withName(group).get());
    }
  }

  @Test
  void egressNamespacesSurviveSeededKillsWithoutADuplicateOrAChangedAddress(KubeApiServer server,
      KubernetesClient client, @TempDir Path dir) throws Exception {
    eachSeed("egressip", dir, (seed, prefix, runDir) -> egress(server, client, runDir, seed, prefix));
  }

  private void egress(KubeApiServer server, KubernetesClient client, Path dir, long seed, String prefix)
      throws Exception {
    ReliabilityFixtures.egressIpam(client, "crash", "198.18.11.0/24", "crash-w1", "crash-zone");
    int count = 100;
    try {
      RunResult r = crashRun(server, client, dir, "egressip", 1, seed, count,
          i -> ReliabilityFixtures.optedInNamespace(client, prefix + "ns" + i, prefix + "run", "crash"),
          () -> Shown.egressIps(client, "burst", prefix + "run", ""),
          Surfaces.egress(client, ip -> ip.startsWith("198.18.11.")), ip -> ip.startsWith("198.18.11."));
      assertClean(r);
      assertNetworkShowsWhatIsAnnotated(client, prefix + "run");
    } finally {
      ReliabilityCleanup.namespaces(client, "burst", prefix + "run");
      awaitReleased(client, "egressip", ip -> ip.startsWith("198.18.11."));
      client.resources(EgressIPAM.class).withName("crash").delete();
      ReliabilityFixtures.deleteEgressNode(client, "crash-w1");
      awaitGone(() -> client.resources(EgressIPAM.class).withName("crash").get());
    }
  }

  /**
   * Two keepalived groups on one network share a router-id space (1-255); Services of both arrive in a burst. Each
   * VIP's router id is the resource: never on two VIPs, never changed once given.
   */
  @Test
  void keepalivedRouterIdsSurviveSeededKillsWithoutADuplicateOrAChangedId(KubeApiServer server,
      KubernetesClient client, @TempDir Path dir) throws Exception {
    eachSeed("keepalived", dir, (seed, prefix, runDir) -> keepalived(server, client, runDir, seed, prefix));
  }

  private void keepalived(KubeApiServer server, KubernetesClient client, Path dir, long seed, String prefix)
      throws Exception {
    String ns = client.getNamespace();
    List<String> groups = List.of("crash-ka", "crash-kb");
    ReliabilityFixtures.keepalivedGroups(client, ns, "crash-k1", "crash-keepalived", groups);
    int count = 60;
    try {
      RunResult r = crashRun(server, client, dir, "keepalived", 1, seed, count,
          i -> ReliabilityFixtures.keepalivedService(client, ns, prefix + "k" + i, groups.get(i % 2),
              "198.18.17." + (i + 1)),
          () -> Shown.routerIds(client, ns, groups),
          Surfaces.keepalived(client, ns, ip -> ip.startsWith("198.18.17.")), id -> true, groups);
      assertClean(r);
    } finally {
      ReliabilityCleanup.services(client, ns);
      for (String name : groups) {
        client.resources(KeepalivedGroup.class).inNamespace(ns).withName(name).delete();
      }
      client.nodes().withName("crash-k1").delete();
      awaitReleased(client, "keepalived", id -> true, List.of("/" + ns + "/"));
      for (String name : groups) {
        awaitGone(() -> client.resources(KeepalivedGroup.class).inNamespace(ns).withName(name).get());
      }
    }
  }

  /**
   * On OpenShift SDN the annotation is half the story: each served namespace's NetNamespace carries its address, and
   * the node's HostSubnet hosts every one of them (by address, or by the CIDR SDN picks from on bare metal).
   */
  private static void assertNetworkShowsWhatIsAnnotated(KubernetesClient client, String burst) {
    if (!client.supports(NetNamespace.class)) {
      return;
    }
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
      Map<String, List<String>> annotated = Shown.egressIps(client, "burst", burst, "");
      assertThat(annotated).isNotEmpty();
      List<String> hosted = new java.util.ArrayList<>();
      client.resources(HostSubnet.class).list().getItems().forEach(h -> {
        hosted.addAll(h.getEgressIPs() == null ? List.of() : h.getEgressIPs());
        hosted.addAll(h.getEgressCIDRs() == null ? List.of() : h.getEgressCIDRs());
      });
      List<org.ipamoperators.core.address.IpRange> ranges = hosted.stream()
          .map(x -> org.ipamoperators.core.address.IpRange.parse(x.contains("/") ? x : x + "/32")).toList();
      annotated.forEach((ns, ips) -> {
        NetNamespace n = client.resources(NetNamespace.class).withName(ns).get();
        assertThat(n.getEgressIPs()).as("NetNamespace %s", ns).containsExactlyElementsOf(ips);
        assertThat(ips).as("hosted by a HostSubnet (%s)", hosted).allMatch(ip -> ranges.stream()
            .anyMatch(r -> r.contains(org.ipamoperators.core.address.Ip.parse(ip))));
      });
    });
  }

  private static void assertClean(RunResult r) {
    String what = r.toString();
    assertThat(r.duplicatesSeen()).as("addresses seen on two owners in any snapshot: %s", what).isZero();
    assertThat(r.changedAssignments()).as("owners whose address changed: %s", what).isZero();
    assertThat(r.findings()).as("audit findings after convergence: %s", what).isEmpty();
    assertThat(r.kills()).isEqualTo(KILLS);
    assertThat(r.lives()).as("lives that served nothing new before their kill: %s", what)
        .allMatch(l -> l.progressed(r.objects()));
  }

  private static void awaitReleased(KubernetesClient client, String controller,
      java.util.function.Predicate<String> ours) {
    awaitReleased(client, controller, ours, List.of());
  }

  /** With several seeds: waits until the next run can create an object of the same name. */
  private static void awaitGone(java.util.function.Supplier<Object> get) {
    if (SEEDS > 1) {
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).until(() -> get.get() == null);
    }
  }

  /**
   * Waits until the ledger holds nothing of the run's (its operator still running), so that the next seed's run
   * starts clean; a run whose deletes left claims behind fails here.
   */
  private static void awaitReleased(KubernetesClient client, String controller,
      java.util.function.Predicate<String> ours, List<String> holders) {
    if (SEEDS == 1) {
      return; // nothing runs after it that its leftovers could confuse
    }
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() ->
        assertThat(ClusterFacts.read(client, Set.of(controller)).entries().stream()
            .filter(e -> ours.test(e.resource().value()))
            .filter(e -> holders.isEmpty() || holders.stream().anyMatch(h -> e.owner().contains(h)))
            .map(Object::toString).toList())
            .as("%s ledger entries left after the run's objects were deleted", controller).isEmpty());
  }

  private interface Snapshot {
    Map<String, List<String>> read();
  }

  /**
   * One life of the operator (of the leader, with two replicas) that ended in a kill: owners served when it began,
   * objects created and owners served when it was killed, how long it took from its start (with two replicas: from
   * the last kill) to {@code /readyz}, and from ready to the kill.
   */
  record Life(int n, int servedBefore, int createdAtKill, int servedAtKill, long readyMillis, long killedAfterReadyMillis) {
    /** It served more than there was before, or nothing was left to serve. */
    boolean progressed(int count) {
      return servedAtKill > servedBefore || servedBefore == count;
    }

    /** Killed with work left: created objects not served yet. */
    boolean midWork() {
      return servedAtKill < createdAtKill;
    }
  }

  /**
   * One crash run: {@code count} objects in {@link #KILLS} + 1 waves, each created by 4 threads; the operator
   * (the leader, with two replicas) is killed {@link #KILLS} times, each time after it is ready (caches synced:
   * {@code /readyz}), has served something more (at most 60 s, else the run fails) and a seeded 0-1.2 s more of its
   * work on the wave created when it became ready, and started again; a watcher reads every surface of
   * {@code surfaces} all along.
   */
  private RunResult crashRun(KubeApiServer server, KubernetesClient client, Path dir, String controller,
      int replicas, long seed, int count, java.util.function.IntConsumer create, Snapshot snapshot,
      Surfaces surfaces, java.util.function.Predicate<String> ours) throws Exception {
    return crashRun(server, client, dir, controller, replicas, seed, count, create, snapshot, surfaces, ours,
        List.of());
  }

  /**
   * As above; with {@code holders}, only findings whose parties name one of them count (router ids are numbers any
   * other test's group may hold too).
   */
  private RunResult crashRun(KubeApiServer server, KubernetesClient client, Path dir, String controller,
      int replicas, long seed, int count, java.util.function.IntConsumer create, Snapshot snapshot,
      Surfaces surfaces, java.util.function.Predicate<String> ours, List<String> holders) throws Exception {
    Random random = new Random(seed);
    System.out.printf("[crash-run] %s replicas %d seed %d kills %d objects %d%n", controller, replicas, seed, KILLS,
        count);
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    SnapshotCheck checks = new SnapshotCheck();
    SnapshotWatcher watcher = SnapshotWatcher.start("crash-run-watcher " + controller, checks, snapshot::read,
        surfaces, () -> {});

    Map<String, Process> running = new HashMap<>();
    for (int i = 0; i < replicas; i++) {
      running.put("r" + i, this.replicas.start(dir, kubeconfig, client.getNamespace(), controller,
          replicas == 1 ? null : "r" + i, "r" + i + "-0", options(controller)));
    }
    java.util.concurrent.atomic.AtomicInteger created = new java.util.concurrent.atomic.AtomicInteger();
    ExecutorService creators = Executors.newFixedThreadPool(4);
    int waves = KILLS + 1;
    wave(creators, create, created, 0, count / waves);
    List<Life> lives = new java.util.ArrayList<>();
    int servedBefore = 0;
    Instant spawned = Instant.now();
    for (int k = 1; k <= KILLS; k++) {
      String victim = replicas == 1 ? "r0" : this.replicas.awaitReadyLeader(running);
      Process op = running.get(victim);
      if (replicas == 1) {
        this.replicas.awaitReady(op, "ok");
      }
      long ready = Duration.between(spawned, Instant.now()).toMillis();
      // More work arrives as it becomes ready; the kill lands a seeded moment after this life's first progress
      // (a whole egress pass publishes at its end, so a fixed moment after ready often lands before any).
      wave(creators, create, created, k * count / waves, (k + 1) * count / waves);
      int before = servedBefore;
      long readyAt = System.nanoTime();
      await("life " + k + " of " + controller + " serves something within 60 s of ready")
          .atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
          .until(() -> { int now = served(snapshot); return now > before || now == count; });
      Thread.sleep(random.nextInt(1200));
      long delay = (System.nanoTime() - readyAt) / 1_000_000;
      int createdAtKill = created.get();
      int servedAtKill = served(snapshot);
      op.destroyForcibly(); // SIGKILL: nothing in flight gets to finish
      assertThat(op.waitFor(30, TimeUnit.SECONDS)).isTrue();
      lives.add(new Life(k, servedBefore, createdAtKill, servedAtKill, ready, delay));
      servedBefore = servedAtKill;
      spawned = Instant.now();
      running.put(victim, this.replicas.start(dir, kubeconfig, client.getNamespace(), controller,
          replicas == 1 ? null : victim, victim + "-" + k, options(controller)));
    }
    creators.shutdown();
    assertThat(creators.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
    lives.forEach(l -> System.out.println("[crash-run] " + controller + " " + l));
    Instant lastStart = Instant.now();
    await().atMost(Duration.ofSeconds(240)).pollInterval(Duration.ofMillis(500))
        .failFast(() -> running.values().stream().noneMatch(Process::isAlive))
        .until(() -> served(snapshot) == count);
    Duration converged = Duration.between(lastStart, Instant.now());
    watcher.stop();
    checks.check(snapshot.read());
    checks.check(surfaces.read());
    surfaces.close();

    // What is left after a minute is the run's result, reported by assertClean.
    List<Finding> findings = LedgerFindings.settled(client, Set.of(controller), f -> ours.test(f.resource().value())
        && (holders.isEmpty() || f.parties().stream().anyMatch(p -> holders.stream().anyMatch(p::contains))),
        Duration.ofSeconds(60));
    RunResult r = new RunResult(controller, replicas, seed, count, KILLS, watcher.taken(), watcher.meanReadMillis(),
        surfaces.watched().toString(), checks.duplicates().size(), List.copyOf(checks.duplicates()),
        checks.changed().size(), List.copyOf(findings), converged, lives);
    System.out.println("[crash-run] " + r);
    Files.writeString(dir.resolve("result.txt"), r.toString());
    return r;
  }

  /**
   * The operator's options for a run. Keepalived keeps a deleted group's router ids and metrics ports for a grace
   * period (90 s by default) so that peers still running the old configuration never meet a new group on the same
   * id; with several seeds the next run waits for the release, so the run uses a short one.
   */
  private static List<String> options(String controller) {
    return controller.equals("keepalived") && SEEDS > 1
        ? List.of("--keepalived-router-id-grace-seconds", "5") : List.of();
  }

  /** Creates objects {@code from} (inclusive) to {@code to} on the creators, counting each once made. */
  private static void wave(ExecutorService creators, java.util.function.IntConsumer create,
      java.util.concurrent.atomic.AtomicInteger created, int from, int to) {
    for (int i = from; i < to; i++) {
      int n = i;
      creators.submit(() -> {
        create.accept(n);
        created.incrementAndGet();
      });
    }
  }

  /** Owners that show something now. */
  private static int served(Snapshot snapshot) {
    return (int) snapshot.read().values().stream().filter(v -> !v.isEmpty()).count();
  }
}
