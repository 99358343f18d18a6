package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.testsupport.crds.CrdInstaller;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Address;
import software.amazon.awssdk.services.ec2.model.Filter;

/**
 * {@link ControlPlaneRestartIT} for Elastic IPs: 24 Eips arrive in a burst (4 threads) while the eip operator (its own
 * process, against moto) runs on an apiserver and etcd of this test's own; kube-apiserver is stopped (SIGTERM) and
 * started again and etcd SIGKILLed and started again on its data, in an order and at points of the burst drawn from a
 * printed seed ({@code -Dipam.reliability.seed} replays it). An AllocateAddress
 * whose status write meets the outage must be found again by the Eip's UID tag, not repeated. No public address
 * may be shown by two Eips at any snapshot, none may change once shown; in the end EC2 holds exactly the addresses
 * the Eips show, one each, and deleting the Eips releases every one. The operator is never restarted.
 */
@MotoTest
class EipControlPlaneRestartIT {
  private static final String CLUSTER = "restart-run";
  private static final long SEED = Long.getLong("ipam.reliability.seed", System.nanoTime());
  /** Runs on fresh apiservers (one moto: each run ends with no address left), seeds {@code SEED, SEED + 1, ...}. */
  private static final int SEEDS = Integer.getInteger("ipam.reliability.seeds", 1);

  @Test
  void eipsKeepOneAddressEachThroughAnApiserverRestartAndAnEtcdKill(MotoServer moto, Ec2Client ec2,
      @TempDir Path dir) throws Exception {
    for (int k = 0; k < SEEDS; k++) {
      System.out.printf("[control-plane-restart] eip run %d of %d%n", k + 1, SEEDS);
      once(moto, ec2, java.nio.file.Files.createDirectories(dir.resolve("seed-" + k)), SEED + k);
    }
  }

  private void once(MotoServer moto, Ec2Client ec2, Path dir, long seed) throws Exception {
    KubeApiServer server = KubeApiServer.startPrivate();
    Process op = null;
    try (KubernetesClient client = server.newClient()) {
      CrdInstaller.install(client, "META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
          "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml", "META-INF/fabric8/eips.materialize.cloud-v1.yml");
      String ns = "restart-eip";
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
      op = EipOperatorProcess.start(dir, kubeconfig, ns, moto.endpoint(), "op", CLUSTER);
      Process running = op;
      // The outages come once the operator runs: one that hits its start-up makes it exit (a kubelet would start it
      // again), which is not what this test is about.
      await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
          .failFast(() -> !running.isAlive())
          .until(() -> output(dir).contains("caches synced"));

      SnapshotCheck snapshots = new SnapshotCheck();
      SnapshotWatcher watcher = SnapshotWatcher.start("eip-restart-watcher", snapshots, () -> shown(client, ns));

      java.util.function.IntConsumer create = i -> {
        Eip e = new Eip();
        e.getMetadata().setName("restart-" + i);
        e.getMetadata().setNamespace(ns);
        e.setSpec(EipSpec.of(EipSelector.pod("restart-pod-" + i)));
        client.resource(e).create();
      };
      int expected = 24;
      ControlPlaneBurst.Outages down = ControlPlaneBurst.seededOutages(server, seed, expected, create, "eip");

      Instant start = Instant.now();
      try {
        await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(500)).failFast(() -> !running.isAlive())
            .until(() -> shown(client, ns).size() == expected);
      } catch (org.awaitility.core.TerminalFailureException e) {
        String out = output(dir);
        throw new AssertionError("the eip operator exited (" + running.exitValue() + "): "
            + out.substring(Math.max(0, out.length() - 3000)), e);
      }
      Duration converged = Duration.between(start, Instant.now());
      watcher.stop();
      snapshots.check(shown(client, ns));

      Set<String> allocations = new HashSet<>();
      for (Eip e : client.resources(Eip.class).inNamespace(ns).list().getItems()) {
        allocations.add(e.getStatus().allocationId());
      }
      String summary = String.format("%s; apiserver down %d ms, etcd down %d ms, %d snapshots, %d Eips, converged %d ms "
          + "after the last create", down.where(), down.apiserverDown().toMillis(), down.etcdDown().toMillis(),
          watcher.taken(), expected, converged.toMillis());
      System.out.println("[control-plane-restart] eip " + summary + ", " + ours(ec2).size() + " addresses in EC2");
      assertThat(snapshots.duplicates()).as(summary).isEmpty();
      assertThat(snapshots.changed()).as(summary).isEmpty();
      assertThat(allocations).as("one allocation per Eip: %s", summary).hasSize(expected);
      // A second address would come from an AllocateAddress repeated after the outage cut off its status write.
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() ->
          assertThat(ours(ec2)).as(summary).extracting(Address::allocationId)
              .containsExactlyInAnyOrderElementsOf(allocations));
      assertThat(running.isAlive()).as("the operator runs on through the outages").isTrue();

      client.resources(Eip.class).inNamespace(ns).delete();
      await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1))
          .until(() -> client.resources(Eip.class).inNamespace(ns).list().getItems().isEmpty());
      assertThat(ours(ec2)).as("released with their Eips: %s", summary).isEmpty();
    } finally {
      if (op != null) {
        op.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      server.stop();
    }
  }

  /** The operator's stdout and stderr so far. */
  private static String output(Path dir) throws java.io.IOException {
    StringBuilder b = new StringBuilder();
    for (String f : List.of("op.out", "op.err")) {
      Path p = dir.resolve(f);
      if (java.nio.file.Files.exists(p)) {
        b.append(java.nio.file.Files.readString(p));
      }
    }
    return b.toString();
  }

  private static List<Address> ours(Ec2Client ec2) {
    return ec2.describeAddresses(r -> r.filters(Filter.builder().name("tag:" + EipNames.TAG_CLUSTER)
        .values(CLUSTER).build())).addresses();
  }

  private static Map<String, List<String>> shown(KubernetesClient client, String ns) {
    Map<String, List<String>> out = new HashMap<>();
    for (Eip e : client.resources(Eip.class).inNamespace(ns).list().getItems()) {
      if (e.getStatus() != null && e.getStatus().publicIpAddress() != null) {
        out.put(e.getMetadata().getName(), List.of(e.getStatus().publicIpAddress()));
      }
    }
    return out;
  }
}
