package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.time.Instant;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.kube.WriteRefusal;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Services sharing one address under a sharing key (ours or MetalLB's), against a real API server:
 * the claim belongs to the key and lists its Services, a clash is reported on the clashing Service
 * only, and the address is released when the last Service leaves.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class SharingIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private Operator operator;
  private KubeApiServer server;
  private VipCluster cluster;
  private KubernetesClient client;
  private String ns;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    this.server = server;
    this.ns = client.getNamespace();
    cluster = new VipCluster(client);
    operator = VipCluster.startOperator(server);
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  private List<String> members(String ip) {
    IPClaim c = cluster.claim(ip);
    String v = c == null || c.getMetadata().getAnnotations() == null ? null
        : c.getMetadata().getAnnotations().get(VipAnnotations.SHARING_MEMBERS);
    if (v == null) {
      return List.of();
    }
    return java.util.Arrays.stream(v.split("\"service\":\"")).skip(1).map(x -> x.substring(0, x.indexOf('"'))).sorted().toList();
  }

  /** Services a and b (ports 80 and 443) sharing under key k in pool p1: their address, once both show it. */
  private String sharedByAAndB() {
    cluster.group("p1", "192.0.2.0/28", List.of());
    cluster.create(cluster.lb("a").editMetadata().withAnnotations(Map.of(VipAnnotations.SHARING_KEY, "k")).endMetadata());
    cluster.create(cluster.lb("b").editMetadata().withAnnotations(Map.of(VipAnnotations.SHARING_KEY, "k")).endMetadata()
        .editSpec().editFirstPort().withPort(443).endPort().endSpec());
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.ingress("a")).hasSize(1);
      assertThat(cluster.ingress("b")).isEqualTo(cluster.ingress("a"));
      assertThat(members(cluster.ingress("a").get(0))).containsExactly(ns + "/a", ns + "/b");
    });
    return cluster.ingress("a").get(0);
  }

  private void awaitWarning(String service, String reason, String text) {
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.events(service)).anySatisfy(e -> {
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getReason()).isEqualTo(reason);
      assertThat(e.getMessage()).contains(text);
    }));
  }

  @Test
  void servicesWithTheSameKeyShareAnAddressUntilTheLastOneLeavesAndAClashIsReportedOnTheClashingOne() {
    cluster.group("p1", "192.0.2.0/28", List.of());
    cluster.create(cluster.lb("http").editMetadata().withAnnotations(Map.of(VipAnnotations.SHARING_KEY, "web")).endMetadata());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("http")).containsExactly("192.0.2.1"));
    // MetalLB's legacy key is the same key; other ports.
    cluster.create(cluster.lb("https").editMetadata().withAnnotations(Map.of(VipAnnotations.METALLB_LEGACY_SHARING_KEY, "web"))
        .endMetadata().editSpec().editFirstPort().withName("https").withPort(443).endPort().addNewPort().withName("dns").withPort(80)
        .withProtocol("UDP").endPort().endSpec());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("https")).containsExactly("192.0.2.1"));
    IPClaim claim = cluster.claim("192.0.2.1");
    assertThat(claim.getSpec().owner().kind()).isEqualTo("SharingKey");
    assertThat(claim.getSpec().owner().name()).isEqualTo("web");
    assertThat(members("192.0.2.1")).containsExactly(ns + "/http", ns + "/https");
    assertThat(cluster.condition("https").getReason()).isEqualTo("Shared");

    // Port 80/TCP again, under MetalLB's current key: pending, told why; the others untouched.
    cluster.create(cluster.lb("clash").editMetadata().withAnnotations(Map.of(VipAnnotations.METALLB_SHARING_KEY, "web"))
        .endMetadata());
    awaitWarning("clash", "PortClash", "TCP/80 already used by " + ns + "/http");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.condition("clash").getStatus()).isEqualTo("False");
      assertThat(cluster.condition("clash").getReason()).isEqualTo("PortClash");
    });
    assertThat(cluster.ingress("clash")).isEmpty();
    assertThat(cluster.events("http")).noneMatch(e -> "Warning".equals(e.getType()));
    assertThat(cluster.condition("http").getStatus()).isEqualTo("True");
    assertThat(members("192.0.2.1")).containsExactly(ns + "/http", ns + "/https");

    // An unrelated Service cannot have the shared address.
    cluster.create(cluster.lb("intruder").editSpec().withLoadBalancerIP("192.0.2.1").editFirstPort().withPort(8080)
        .endPort().endSpec());
    awaitWarning("intruder", "AddressUnavailable", "held by sharing key web");

    // The clashing Service gets in once the one it clashed with is gone; the address stays while used.
    cluster.delete("http");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.service("http")).isNull();
      assertThat(cluster.ingress("clash")).containsExactly("192.0.2.1");
      assertThat(members("192.0.2.1")).containsExactly(ns + "/clash", ns + "/https");
    });
    assertThat(cluster.ingress("https")).containsExactly("192.0.2.1");
    cluster.delete("https");
    cluster.delete("clash");
    // The last member gone, the key's claim is deleted and the waiting Service gets the address
    // (often at once: the deletion wakes it up, so the free moment is not observed).
    await().atMost(WAIT).untilAsserted(() -> {
      IPClaim now = cluster.claim("192.0.2.1");
      assertThat(now).isNotNull();
      assertThat(now.getSpec().owner().kind()).isEqualTo("Service");
      assertThat(now.getSpec().owner().name()).isEqualTo("intruder");
      assertThat(cluster.ingress("intruder")).containsExactly("192.0.2.1");
    });
    await().atMost(WAIT).untilAsserted(() ->
        assertThat(cluster.services().stream().map(s -> s.getMetadata().getName())).containsExactly("intruder"));
  }

  @Test
  void localTrafficPolicyNeedsTheSamePodsAndAKeyAddedLaterKeepsTheAddress() {
    cluster.group("p1", "192.0.2.0/28", List.of());
    cluster.create(cluster.lb("alone"));
    await().atMost(WAIT).until(() -> !cluster.ingress("alone").isEmpty());
    String ip = cluster.ingress("alone").get(0);
    // Adding a key converts its own claim into the key's, same address.
    cluster.annotate("alone", VipAnnotations.SHARING_KEY, "k");
    await().atMost(WAIT).untilAsserted(() -> {
      IPClaim c = cluster.claim(ip);
      assertThat(c.getSpec().owner().kind()).isEqualTo("SharingKey");
      assertThat(members(ip)).containsExactly(ns + "/alone");
    });
    assertThat(cluster.ingress("alone")).containsExactly(ip);
    cluster.create(cluster.lb("joiner").editMetadata().withAnnotations(Map.of(VipAnnotations.SHARING_KEY, "k"))
        .endMetadata().editSpec().editFirstPort().withPort(443).endPort().endSpec());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("joiner")).containsExactly(ip));

    // Local traffic policy: only Services selecting the same pods share.
    cluster.create(cluster.lb("local-a").editMetadata().withAnnotations(Map.of(VipAnnotations.SHARING_KEY, "l"))
        .endMetadata().editSpec().withExternalTrafficPolicy("Local").withSelector(Map.of("app", "x")).endSpec());
    await().atMost(WAIT).until(() -> !cluster.ingress("local-a").isEmpty());
    String local = cluster.ingress("local-a").get(0);
    cluster.create(cluster.lb("local-b").editMetadata().withAnnotations(Map.of(VipAnnotations.SHARING_KEY, "l"))
        .endMetadata().editSpec().withExternalTrafficPolicy("Local").withSelector(Map.of("app", "x"))
        .editFirstPort().withPort(81).endPort().endSpec());
    cluster.create(cluster.lb("local-c").editMetadata().withAnnotations(Map.of(VipAnnotations.SHARING_KEY, "l"))
        .endMetadata().editSpec().withExternalTrafficPolicy("Local").withSelector(Map.of("app", "y"))
        .editFirstPort().withPort(82).endPort().endSpec());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("local-b")).containsExactly(local));
    awaitWarning("local-c", "PortClash", "externalTrafficPolicy Local needs the same pod selector");
    assertThat(cluster.ingress("local-c")).isEmpty();
    assertThat(members(local)).containsExactly(ns + "/local-a", ns + "/local-b");
  }

  @Test
  void manyServicesJoiningAndLeavingAtOnceNeverLoseOrDoubleTheSharedAddress() throws Exception {
    cluster.group("p1", "192.0.2.0/26", List.of());
    int n = 15;
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
    for (int i = 0; i < n; i++) {
      int port = 1000 + i;
      String name = "member-" + i;
      String other = "other-" + i;
      pool.submit(() -> cluster.create(cluster.lb(name).editMetadata()
          .withAnnotations(Map.of(VipAnnotations.SHARING_KEY, "crowd")).endMetadata()
          .editSpec().editFirstPort().withPort(port).endPort().endSpec()));
      pool.submit(() -> cluster.create(cluster.lb(other)));
    }
    pool.shutdown();
    assertThat(pool.awaitTermination(1, java.util.concurrent.TimeUnit.MINUTES)).isTrue();
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      for (int i = 0; i < n; i++) {
        assertThat(cluster.ingress("member-" + i)).hasSize(1);
        assertThat(cluster.ingress("other-" + i)).hasSize(1);
      }
    });
    String shared = cluster.ingress("member-0").get(0);
    java.util.Set<String> others = new java.util.HashSet<>();
    for (int i = 0; i < n; i++) {
      assertThat(cluster.ingress("member-" + i)).containsExactly(shared);
      others.add(cluster.ingress("other-" + i).get(0));
    }
    assertThat(others).hasSize(n).doesNotContain(shared);
    assertThat(members(shared)).hasSize(n);
    assertThat(cluster.claims()).hasSize(n + 1);

    java.util.concurrent.ExecutorService leave = java.util.concurrent.Executors.newFixedThreadPool(8);
    for (int i = 0; i < n - 1; i++) {
      String name = "member-" + i;
      leave.submit(() -> cluster.delete(name));
    }
    leave.shutdown();
    assertThat(leave.awaitTermination(1, java.util.concurrent.TimeUnit.MINUTES)).isTrue();
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
        assertThat(members(shared)).containsExactly(ns + "/member-" + (n - 1)));
    assertThat(cluster.ingress("member-" + (n - 1))).containsExactly(shared);
    cluster.delete("member-" + (n - 1));
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.claim(shared)).isNull());
    assertThat(cluster.claims()).hasSize(n);
  }

  /**
   * A deleted member's release that the API server refuses for longer than java-operator-sdk retries a
   * failed reconcile (five times, about 26 s) still happens once the claim can be written again; the
   * other member keeps the address throughout.
   */
  @Test
  void aDeletedMemberLeavesTheSharedAddressOnceItsClaimCanBeWrittenAgain() throws Exception {
    String ip = sharedByAAndB();
    String probe = "refusal-probe";
    client.resource(IPClaim.of(probe, new IPClaimSpec("203.0.113.250", "probe", new ClaimOwner("test", "Probe", null,
        probe, null)), Map.of())).create();
    WriteRefusal refusal = WriteRefusal.start(client, "refuse-shared-claim", "ipam.ipamoperators.org", "ipclaims",
        List.of(ClaimNames.of(Ip.parse(ip))), probe, n -> client.resources(IPClaim.class).withName(probe)
            .edit(c -> {
              c.getMetadata().setLabels(Map.of("probe", Integer.toString(n)));
              return c;
            }));
    try {
      cluster.delete("a");
      Instant end = refusal.effective().plus(Duration.ofSeconds(40));
      while (Instant.now().isBefore(end)) {
        assertThat(cluster.ingress("b")).containsExactly(ip);
        assertThat(cluster.claim(ip)).isNotNull();
        Thread.sleep(500);
      }
    } finally {
      refusal.close();
    }
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(members(ip)).containsExactly(ns + "/b"));
    assertThat(cluster.ingress("b")).containsExactly(ip);
  }

  @Test
  void aRestartKeepsTheSharedAddressAndItsMembers() {
    String ip = sharedByAAndB();
    operator.stop();
    client.services().withName("b").editStatus(x -> {
      x.getStatus().getLoadBalancer().setIngress(null); // as by a backup restore
      return x;
    });
    cluster.create(cluster.lb("late"));
    operator = VipCluster.startOperator(server);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.ingress("b")).containsExactly(ip);
      assertThat(cluster.ingress("late")).hasSize(1);
    });
    assertThat(cluster.ingress("a")).containsExactly(ip);
    assertThat(cluster.ingress("late")).doesNotContain(ip);
    assertThat(members(ip)).containsExactly(ns + "/a", ns + "/b");
  }
}
