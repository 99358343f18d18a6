package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.IPGroup;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two {@code ipam operator} replicas on one Lease: exactly one leads, both are ready, and the
 * standby takes over when the leader stops. Short lease timings (4 s lease, 3 s renew deadline,
 * 500 ms retry) keep the test quick.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml", "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class LeaderElectionIT {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Duration LEASE = Duration.ofSeconds(4);
  private final List<OperatorRun> runs = new ArrayList<>();

  @AfterEach
  void stopAll() {
    for (OperatorRun r : runs) {
      if (!r.exited()) {
        r.command.stop();
        try {
          r.awaitExit(WAIT);
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      }
    }
  }

  private OperatorRun replica(Path kubeconfig, String ns, int port, String identity, String... more) {
    List<String> args = OperatorRun.args(kubeconfig, port, ns, "--lease-name", "the-lease",
        "--leader-identity", identity, "--lease-duration", LEASE.toSeconds() + "s", "--renew-deadline", "3s",
        "--retry-period", "500ms");
    args.addAll(List.of(more));
    OperatorRun r = OperatorRun.start(args.toArray(String[]::new));
    runs.add(r);
    return r;
  }

  private static String holder(KubernetesClient client) {
    Lease lease = client.resources(Lease.class).withName("the-lease").get();
    return lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
  }

  private static void awaitReady(OperatorRun r, int port) {
    await().atMost(WAIT).ignoreExceptions().failFast(r::assertRunning)
        .untilAsserted(() -> assertThat(OperatorRun.get(port, "/readyz").status()).isEqualTo(200));
  }

  @Test
  void oneLeadsTheOtherStandsByAndTakesOverWhenTheLeaderStops(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    String ns = client.getNamespace();
    int portA = LoopbackPorts.freePort();
    int portB = LoopbackPorts.freePort();
    OperatorRun a = replica(kubeconfig, ns, portA, "replica-a");
    awaitReady(a, portA);
    OperatorRun b = replica(kubeconfig, ns, portB, "replica-b");
    awaitReady(b, portB);

    await().atMost(WAIT).untilAsserted(() -> assertThat(holder(client)).isIn("replica-a", "replica-b"));
    String first = holder(client);
    OperatorRun leader = first.equals("replica-a") ? a : b;
    OperatorRun standby = leader == a ? b : a;
    int leaderPort = leader == a ? portA : portB;
    int standbyPort = leader == a ? portB : portA;
    await().atMost(WAIT).until(leader.command::isLeader);
    // For several renewals nothing changes: one leader, the standby ready and waiting.
    for (int i = 0; i < 6; i++) {
      assertThat(holder(client)).isEqualTo(first);
      assertThat(leader.command.isLeader()).isTrue();
      assertThat(standby.command.isLeader()).isFalse();
      assertThat(OperatorRun.get(standbyPort, "/readyz"))
          .isEqualTo(new OperatorRun.Response(200, "ok: standby, leader is " + first + "\n"));
      assertThat(OperatorRun.get(leaderPort, "/readyz").body()).isEqualTo("ok: leader\n");
      assertThat(OperatorRun.get(standbyPort, "/metrics").body()).contains("ipam_operator_leader 0.0");
      Thread.sleep(500);
    }

    long stoppedAt = System.nanoTime();
    leader.close();
    await().atMost(LEASE.plusSeconds(2)).pollInterval(Duration.ofMillis(100))
        .untilAsserted(() -> {
          assertThat(holder(client)).isEqualTo(standby.command.identity());
          assertThat(standby.command.isLeader()).isTrue();
        });
    Duration takeover = Duration.ofNanos(System.nanoTime() - stoppedAt);
    assertThat(takeover).as("the stopped leader handed the Lease back").isLessThan(LEASE.plusSeconds(2));
    assertThat(OperatorRun.get(standbyPort, "/readyz").body()).isEqualTo("ok: leader\n");
    assertThat(OperatorRun.get(standbyPort, "/metrics").body()).contains("ipam_operator_leader 1.0");
    assertThat(standby.exited()).isFalse();
  }

  @Test
  void theNewLeaderReconciles(KubeApiServer server, KubernetesClient client, @TempDir Path dir) throws Exception {
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    String ns = client.getNamespace();
    int portA = LoopbackPorts.freePort();
    int portB = LoopbackPorts.freePort();
    OperatorRun a = replica(kubeconfig, ns, portA, "replica-a");
    await().atMost(WAIT).until(a.command::isLeader);
    OperatorRun b = replica(kubeconfig, ns, portB, "replica-b");
    awaitReady(b, portB);

    a.close();
    await().atMost(WAIT).until(b.command::isLeader);
    EgressFixtures.egressIpam(client, "after-failover", "203.0.113.0/29", "egress-zone", "a");
    await().atMost(WAIT).untilAsserted(() -> assertThat(OperatorRun.get(portB, "/metrics").body())
        .contains("ipam_egressip_cidr_capacity{cidr=\"203.0.113.0/29\",egressipam=\"after-failover\"}"));
  }

  /**
   * Services deleted while no replica led (their delete events never reached a leader) leave claims
   * behind. With every Service and IPGroup gone no reconcile comes to start the orphan sweep: taking
   * the lead starts it.
   */
  @Test
  void aNewLeaderReleasesTheClaimsOfServicesDeletedBeforeItLedEvenWithNoServiceLeft(KubeApiServer server,
      KubernetesClient client, @TempDir Path dir) throws Exception {
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    String ns = client.getNamespace();
    List<String> gone = List.of("198.51.100.10", "198.51.100.11", "2001:db8::10");
    for (int i = 0; i < gone.size(); i++) {
      claim(client, gone.get(i), new ClaimOwner("vip", "Service", ns, "deleted-" + i,
          java.util.UUID.randomUUID().toString()));
    }
    String notVips = "198.51.100.20";
    claim(client, notVips, new ClaimOwner("egressip", "Namespace", null, ns, null));
    assertThat(client.resources(IPGroup.class).inAnyNamespace().list().getItems()).isEmpty();
    assertThat(client.services().inNamespace(ns).list().getItems()).isEmpty();

    int port = LoopbackPorts.freePort();
    OperatorRun a = replica(kubeconfig, ns, port, "replica-a", "--controllers", "vip");
    await().atMost(WAIT).until(a.command::isLeader);

    await().atMost(WAIT).failFast(a::assertRunning).untilAsserted(() -> assertThat(claimedAddresses(client))
        .as("the claims of the deleted Services are released").doesNotContainAnyElementsOf(gone));
    assertThat(claimedAddresses(client)).as("another controller's claim stays").contains(notVips);
  }

  private static void claim(KubernetesClient client, String ip, ClaimOwner owner) {
    client.resource(IPClaim.of(ClaimNames.of(Ip.parse(ip)), new IPClaimSpec(ip, "test", owner), Map.of())).create();
  }

  private static List<String> claimedAddresses(KubernetesClient client) {
    return client.resources(IPClaim.class).list().getItems().stream().map(c -> c.getSpec().address()).toList();
  }

  @Test
  void aLeaderThatLosesTheLeaseExitsWithOne(KubeApiServer server, KubernetesClient client, @TempDir Path dir)
      throws Exception {
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    int port = LoopbackPorts.freePort();
    OperatorRun a = replica(kubeconfig, client.getNamespace(), port, "replica-a");
    await().atMost(WAIT).until(a.command::isLeader);

    // Someone else holds the Lease now (as after a network partition longer than the lease).
    String now = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").format(ZonedDateTime.now(ZoneOffset.UTC));
    client.resources(Lease.class).withName("the-lease").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"spec\":{\"holderIdentity\":\"intruder\",\"leaseDurationSeconds\":60,\"renewTime\":\"" + now + "\"}}");

    assertThat(a.awaitExit(WAIT)).isEqualTo(1);
    assertThat(holder(client)).as("a lost Lease is not handed back").isEqualTo("intruder");
    assertThat(OperatorRun.statusOrRefused(port, "/healthz")).isEqualTo(-1);
  }
}
