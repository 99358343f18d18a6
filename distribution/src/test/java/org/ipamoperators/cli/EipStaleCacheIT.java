package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.cli.operator.OperatorCommand;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.kube.ApiFaultProxy;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.ec2.Ec2Client;

/**
 * Two eip replicas under leader election; the standby reaches the apiserver through an {@link ApiFaultProxy} that
 * silences every watch, so its caches hold what its first list saw: six Eips associated with six pods. The fresh
 * leader serves a burst, and two of those six Eips are deleted and created again under the same names (new UIDs,
 * new addresses). The fresh leader is SIGKILLed; the stale replica leads while Eips are created and deleted, all
 * unseen by it; then its watches come back. Which Eips are made again or deleted, how many the bursts hold and how
 * long the stale leader runs blind are drawn from a seed ({@code -Dipam.reliability.seed} replays one; printed). At no snapshot may two Eips show one address, nor an Eip (name and
 * UID) show another address than the first it showed; in the end every Eip has exactly the one address EC2 tags
 * with its UID, the Eips with a pod have it on the pod's IP, no private IP holds two addresses, no address of a
 * deleted Eip is left, and deleting every Eip releases every address.
 *
 * <p>About two minutes on the shared machine (two operator JVMs, a Lease to expire, ten stale seconds), so it runs
 * in the long reliability run ({@code -Preliability}, or {@code -Dipam.reliability.long=true}) only. Without the
 * check before an allocation that the Eip still is the one reconciled, it failed here: the stale leader allocated
 * for its copies of a-0 and a-1 and wrote those addresses into the statuses of the new a-0 and a-1.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/eips.materialize.cloud-v1.yml"})
@MotoTest
@EnabledIfSystemProperty(named = "ipam.reliability.long", matches = "true")
class EipStaleCacheIT {
  private static final String CLUSTER = "stale-cache";
  private static final long SEED = Long.getLong("ipam.reliability.seed", System.nanoTime());
  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void stop(KubernetesClient client) throws Exception {
    EipOperatorProcess.stopAll(processes, client);
  }

  @Test
  void aStaleReplicaLeadsWithoutASecondAddressOrALeak(KubeApiServer server, KubernetesClient client, MotoServer moto,
      Ec2Client ec2, @TempDir Path dir) throws Exception {
    String ns = client.getNamespace();
    java.util.Random random = new java.util.Random(SEED);
    List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3, 4, 5));
    java.util.Collections.shuffle(order, random);
    List<Integer> remade = order.subList(0, 2); // deleted and made again while the stale replica does not watch
    int deletedWhileStaleLeads = order.get(2 + random.nextInt(4)); // one of the six, never made again
    int bursts = 6 + random.nextInt(5);
    int deletedBursts = 2 + random.nextInt(bursts - 3);
    int newWhileStale = 3 + random.nextInt(5);
    long blindMillis = 5_000 + random.nextInt(10_001);
    System.out.printf("[stale-cache] eip seed %d: remade a-%s, a-%d deleted, %d b (%d deleted), %d c, blind %d ms%n",
        SEED, remade, deletedWhileStaleLeads, bursts, deletedBursts, newWhileStale, blindMillis);
    EipFaultWorld world = new EipFaultWorld(client, ec2, CLUSTER, 62);
    Map<String, String> podIps = world.nodeWithPods("sc-n0", 6);
    List<String> pods = new ArrayList<>(podIps.keySet());
    SnapshotCheck snapshots = new SnapshotCheck();
    SnapshotWatcher watcher = null;
    try (ApiFaultProxy proxy = new ApiFaultProxy(server, 1L)) {
      proxy.silenceWatches(true);
      Process fresh = replica(dir, OperatorRun.writeKubeconfig(dir, server.kubeconfig()), ns, moto, "fresh");
      awaitLeader(client, "fresh");
      watcher = SnapshotWatcher.start("eip-stale-cache-watcher", snapshots, () -> EipFaultWorld.shown(client));
      for (int i = 0; i < 6; i++) {
        create(client, "a-" + i, pods.get(i));
      }
      await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
          .until(() -> associated(client) == 6);

      Process stale = replica(dir, OperatorRun.writeKubeconfig(dir, proxy.kubeconfig()), ns, moto, "stale");
      await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500)).failFast(() -> !stale.isAlive())
          .until(() -> log(dir, "stale").contains("caches synced"));

      // Unseen by the stale replica, served by the fresh leader: a burst, and a-0, a-1 deleted and made again.
      for (int i = 0; i < bursts; i++) {
        create(client, "b-" + i, "sc-nopod-b-" + i);
      }
      for (int i : remade) {
        String name = "a-" + i;
        client.resources(Eip.class).withName(name).delete();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
            .until(() -> client.resources(Eip.class).withName(name).get() == null);
        create(client, name, pods.get(i));
      }
      await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
          .until(() -> EipFaultWorld.shown(client).size() == 6 + bursts && associated(client) == 6);

      fresh.destroyForcibly(); // SIGKILL: the stale replica takes the Lease when it expires
      assertThat(fresh.waitFor(30, TimeUnit.SECONDS)).isTrue();
      awaitLeader(client, "stale");
      // Unseen by the stale leader: new Eips, deleted ones (their finalizer waits for it).
      for (int i = 0; i < newWhileStale; i++) {
        create(client, "c-" + i, "sc-nopod-c-" + i);
      }
      for (int i = 0; i < deletedBursts; i++) {
        client.resources(Eip.class).withName("b-" + i).delete();
      }
      client.resources(Eip.class).withName("a-" + deletedWhileStaleLeads).delete();
      Thread.sleep(blindMillis); // the stale leader runs on what it last heard (its own writes, periodic passes)
      proxy.silenceWatches(false);

      Instant healed = Instant.now();
      int live = 6 - 1 + bursts - deletedBursts + newWhileStale;
      Map<String, String> servedPods = new HashMap<>(podIps);
      servedPods.remove(pods.get(deletedWhileStaleLeads));
      List<String> problems = new ArrayList<>();
      try {
        await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofSeconds(1)).failFast(() -> !stale.isAlive())
            .until(() -> {
              problems.clear();
              problems.addAll(world.problems(servedPods));
              return EipFaultWorld.shown(client).size() == live && client.resources(Eip.class).list().getItems().size() == live
                  && problems.isEmpty();
            });
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        throw new AssertionError("no convergence within 180 s after the watches came back: " + problems
            + "; shown " + EipFaultWorld.shown(client), e);
      }
      Duration converged = Duration.between(healed, Instant.now());
      watcher.stop();
      snapshots.check(EipFaultWorld.shown(client));
      long repaired = client.v1().events().inNamespace(ns).list().getItems().stream()
          .filter(e -> "DuplicateAddressReleased".equals(e.getReason()))
          .mapToLong(e -> e.getCount() == null ? 1 : e.getCount()).sum();
      long swept = log(dir, "stale").lines().filter(l -> l.contains("orphan sweep: released")).count();
      String summary = String.format("seed %d, converged %d ms after the watches came back, %d Eips, %d addresses, "
          + "%d duplicates released, %d orphans swept, %d snapshots", SEED, converged.toMillis(), live,
          world.addresses().size(), repaired, swept, watcher.taken());
      System.out.println("[stale-cache] eip " + summary);
      assertThat(snapshots.duplicates()).as(summary).isEmpty();
      assertThat(snapshots.changed()).as(summary).isEmpty();

      client.resources(Eip.class).delete();
      await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1)).failFast(() -> !stale.isAlive())
          .until(() -> client.resources(Eip.class).list().getItems().isEmpty());
      assertThat(world.addresses()).as("released with their Eips: %s", summary).isEmpty();
    } finally {
      if (watcher != null) {
        watcher.stop();
      }
      world.deleteNodes();
    }
  }

  private static void create(KubernetesClient client, String name, String pod) {
    Eip e = new Eip();
    e.getMetadata().setName(name);
    e.setSpec(EipSpec.of(EipSelector.pod(pod)));
    client.resource(e).create();
  }

  /** An eip replica under leader election (short terms), scoped to the test's namespace. */
  private Process replica(Path dir, Path kubeconfig, String ns, MotoServer moto, String identity) throws Exception {
    List<String> args = new ArrayList<>(List.of("operator", "--controllers", "eip", "--kubeconfig",
        kubeconfig.toString(), "--http-port", Integer.toString(LoopbackPorts.freePort()), "--bind-address",
        "127.0.0.1", "--namespace", ns));
    args.addAll(OperatorProcess.replica(identity));
    Process p = OperatorProcess.start(dir, identity, args, Map.of("CLUSTER_NAME", CLUSTER,
        "AWS_REGION", MotoServer.REGION.id(), "AWS_ENDPOINT_URL", moto.endpoint().toString(),
        "AWS_ACCESS_KEY_ID", "test", "AWS_SECRET_ACCESS_KEY", "test", "AWS_EC2_METADATA_DISABLED", "true",
        "NAMESPACE", ns, "EIP_RESYNC_INTERVAL", "10s", "EIP_ORPHAN_SWEEP_INTERVAL", "10s"));
    processes.add(p);
    return p;
  }

  private static void awaitLeader(KubernetesClient client, String identity) {
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
      Lease lease = client.resources(Lease.class).withName(OperatorCommand.DEFAULT_LEASE).get();
      return lease != null && lease.getSpec() != null && identity.equals(lease.getSpec().getHolderIdentity());
    });
  }

  private static String log(Path dir, String name) throws java.io.IOException {
    StringBuilder b = new StringBuilder();
    for (String f : List.of(name + ".out", name + ".err")) {
      Path p = dir.resolve(f);
      if (Files.exists(p)) {
        b.append(Files.readString(p));
      }
    }
    return b.toString();
  }

  private static long associated(KubernetesClient client) {
    return client.resources(Eip.class).list().getItems().stream()
        .filter(e -> e.getStatus() != null && e.getStatus().associationId() != null).count();
  }

}
