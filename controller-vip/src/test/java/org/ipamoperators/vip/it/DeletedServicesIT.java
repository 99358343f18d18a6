package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 12: Services carry no finalizer of ours. A deleted Service's claims are released on its
 * delete event; those of Services deleted while no operator ran, by the sweep at start; a Service
 * re-created under an old name is another Service (its own claim, never the old one's); finalizers
 * of older versions are removed once, so upgraded Services stay deletable. (A claim whose Service
 * exists but is not in the cache is kept: {@code OrphanSweepIT}.)
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class DeletedServicesIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private VipCluster cluster;
  private KubernetesClient client;
  private KubeApiServer server;
  private Operator operator;

  @BeforeEach
  void setUp(KubeApiServer server, KubernetesClient client) {
    this.server = server;
    this.client = client;
    cluster = new VipCluster(client);
  }

  @AfterEach
  void tearDown() {
    if (operator != null) {
      operator.stop();
    }
    cluster.close();
  }

  private String served(String name) {
    await().atMost(WAIT).until(() -> !cluster.ingress(name).isEmpty());
    return cluster.ingress(name).get(0);
  }

  @Test
  void aDeletedServiceIsReleasedOnItsDeleteEventAndCarriesNoFinalizer() {
    operator = VipCluster.startOperator(server);
    try (LedgerTimeline timeline = new LedgerTimeline(client)) {
      cluster.group("p1", "192.0.2.0/29", List.of());
      cluster.create(cluster.lb("a"));
      cluster.create(cluster.lb("b"));
      String x = served("a");
      String y = served("b");
      assertThat(cluster.service("a").getMetadata().getFinalizers()).isNullOrEmpty();
      cluster.delete("a");
      await().atMost(WAIT).until(() -> cluster.claim(x) == null);
      assertThat(cluster.claim(y).getSpec().owner().name()).isEqualTo("b");
      assertThat(cluster.ingress("b")).containsExactly(y);
      assertThat(timeline.violations()).isEmpty();
    }
  }

  @Test
  void servicesDeletedWhileTheOperatorWasDownAreReleasedAtStartAndANameReusedIsAnotherService() {
    cluster.group("p1", "192.0.2.0/28", List.of());
    operator = VipCluster.startOperator(server);
    Map<String, String> shown = new HashMap<>();
    Map<String, String> uid = new HashMap<>();
    for (String n : List.of("s1", "s2", "s3")) {
      uid.put(n, cluster.create(cluster.lb(n)).getMetadata().getUid());
    }
    for (String n : List.of("s1", "s2", "s3")) {
      shown.put(n, served(n));
    }
    operator.stop();
    operator = null;
    cluster.delete("s1");
    cluster.delete("s2");
    await().atMost(WAIT).until(() -> cluster.service("s1") == null && cluster.service("s2") == null);
    // Both claims outlive their Services while no operator runs.
    assertThat(cluster.claim(shown.get("s1"))).isNotNull();
    assertThat(cluster.claim(shown.get("s2"))).isNotNull();
    String newUid = cluster.create(cluster.lb("s2")).getMetadata().getUid();
    assertThat(newUid).isNotEqualTo(uid.get("s2"));

    LedgerTimeline timeline = new LedgerTimeline(client);
    operator = VipCluster.startOperator(server);
    await().atMost(WAIT).untilAsserted(() -> {
      // (The new s2 may get s1's address once it is free: only the owners tell.)
      assertThat(cluster.claims()).as("claims of s1, deleted while down")
          .noneMatch(c -> uid.get("s1").equals(c.getSpec().owner().uid()));
      assertThat(cluster.claims()).as("claims of the first s2")
          .noneMatch(c -> uid.get("s2").equals(c.getSpec().owner().uid()));
      assertThat(cluster.ingress("s2")).hasSize(1);
    });
    // The new s2 holds a claim of its own (its uid), whichever address it got.
    IPClaim mine = cluster.claim(cluster.ingress("s2").get(0));
    assertThat(mine.getSpec().owner().name()).isEqualTo("s2");
    assertThat(mine.getSpec().owner().uid()).isEqualTo(newUid);
    assertThat(cluster.ingress("s3")).containsExactly(shown.get("s3"));
    assertThat(cluster.claim(shown.get("s3")).getSpec().owner().uid()).isEqualTo(uid.get("s3"));
    // The new s2 never showed an address under the first one's claim.
    timeline.close();
    assertThat(timeline.violations()).isEmpty();
  }

  @Test
  void aServiceThatStoppedBeingALoadBalancerWhileTheOperatorWasDownIsLetGoAtStart() {
    cluster.group("p1", "192.0.2.0/29", List.of());
    operator = VipCluster.startOperator(server);
    cluster.create(cluster.lb("demoted"));
    String x = served("demoted");
    operator.stop();
    operator = null;
    client.services().withName("demoted").edit(s -> {
      s.getSpec().setType("ClusterIP");
      s.getSpec().setAllocateLoadBalancerNodePorts(null);
      return s;
    });
    assertThat(cluster.claim(x)).isNotNull();
    // Never admitted by the event filters now (not a LoadBalancer): the sweep hands it to its reconcile.
    operator = VipCluster.startOperator(server);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.claim(x)).isNull();
      assertThat(cluster.ingress("demoted")).isEmpty();
    });
  }

  @Test
  void finalizersOfOlderVersionsAreRemovedOnce() {
    cluster.group("p1", "192.0.2.0/29", List.of());
    String ns = client.getNamespace();
    // As an older version left them: one served, one served and being deleted (held by our finalizer).
    Service kept = cluster.create(cluster.lb("kept").editMetadata().withFinalizers(VipAnnotations.FINALIZER).endMetadata());
    Service dying = cluster.create(cluster.lb("dying").editMetadata().withFinalizers(VipAnnotations.FINALIZER).endMetadata());
    claim("192.0.2.3", new ClaimOwner("vip", "Service", ns, "kept", kept.getMetadata().getUid()));
    claim("192.0.2.4", new ClaimOwner("vip", "Service", ns, "dying", dying.getMetadata().getUid()));
    show("kept", "192.0.2.3");
    show("dying", "192.0.2.4");
    cluster.delete("dying");
    assertThat(cluster.service("dying").getMetadata().getDeletionTimestamp()).isNotNull();

    try (LedgerTimeline timeline = new LedgerTimeline(client)) {
      operator = VipCluster.startOperator(server);
      await().atMost(WAIT).untilAsserted(() -> {
        assertThat(cluster.service("kept").getMetadata().getFinalizers()).isNullOrEmpty();
        assertThat(cluster.service("dying")).isNull();
        assertThat(cluster.claim("192.0.2.4")).isNull();
      });
      assertThat(cluster.ingress("kept")).containsExactly("192.0.2.3");
      // Gone from the API before its claim went.
      assertThat(timeline.violations()).isEmpty();
    }
  }

  private void claim(String ip, ClaimOwner owner) {
    IPClaim c = IPClaim.of(ClaimNames.of(Ip.parse(ip)), new IPClaimSpec(ip, "ipgroup/p1", owner), Map.of());
    client.resource(c).create();
  }

  private void show(String service, String ip) {
    client.services().withName(service).editStatus(s -> {
      s.getStatus().setLoadBalancer(new io.fabric8.kubernetes.api.model.LoadBalancerStatusBuilder()
          .addNewIngress().withIp(ip).endIngress().build());
      return s;
    });
  }
}
