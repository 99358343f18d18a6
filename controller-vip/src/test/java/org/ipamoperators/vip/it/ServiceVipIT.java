package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The vip-allocator reference's acceptance scenarios for LoadBalancer Services, against a real API
 * server. Addresses are data only (documentation ranges); nothing carries traffic.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class ServiceVipIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private Operator operator;
  private VipCluster cluster;
  private KubernetesClient client;
  private KubeApiServer server;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    this.server = server;
    cluster = new VipCluster(client);
    operator = VipCluster.startOperator(server);
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  private static String condition(IPGroup g, String type) {
    if (g == null || g.getStatus() == null || g.getStatus().conditions() == null) {
      return null;
    }
    return g.getStatus().conditions().stream().filter(c -> type.equals(c.getType())).map(Condition::getStatus)
        .findFirst().orElse(null);
  }

  private void awaitWarning(String service, String reason, String text) {
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.events(service)).anySatisfy(e -> {
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getReason()).isEqualTo(reason);
      assertThat(e.getMessage()).contains(text);
    }));
  }

  @Test
  void aLoadBalancerServiceGetsAnAddressAndAClusterIpServiceIsIgnored() {
    cluster.group("p1", "192.0.2.0/29", List.of("192.0.2.1"));
    cluster.create(cluster.lb("plain").editSpec().withType("ClusterIP").withAllocateLoadBalancerNodePorts(null).endSpec());
    cluster.create(cluster.lb("web"));
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("web")).containsExactly("192.0.2.2"));
    IPClaim claim = cluster.claim("192.0.2.2");
    assertThat(claim.getSpec().pool()).isEqualTo("ipgroup/p1");
    assertThat(claim.getSpec().owner().kind()).isEqualTo("Service");
    assertThat(claim.getSpec().owner().namespace()).isEqualTo(client.getNamespace());
    assertThat(claim.getSpec().owner().name()).isEqualTo("web");
    // No finalizer (issue 12): the claim is released on the Service's delete event.
    assertThat(cluster.service("web").getMetadata().getFinalizers()).isNullOrEmpty();
    await().atMost(WAIT).untilAsserted(() -> {
      IPGroup g = cluster.group("p1");
      assertThat(condition(g, "Ready")).isEqualTo("True");
      assertThat(g.getStatus().used()).isEqualTo(1L);
      assertThat(g.getStatus().free()).isEqualTo("4"); // .1 excluded, .0 and .7 network and broadcast
    });
    assertThat(cluster.service("plain").getMetadata().getFinalizers()).isNullOrEmpty();
    assertThat(cluster.ingress("plain")).isEmpty();
    assertThat(cluster.claims()).hasSize(1);
  }

  @Test
  void aRequestedAddressIsHonouredAndOneAlreadyHeldIsReportedWithItsHolder() {
    cluster.group("p1", "192.0.2.0/24", List.of());
    cluster.create(cluster.lb("first").editSpec().withLoadBalancerIP("192.0.2.50").endSpec());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("first")).containsExactly("192.0.2.50"));
    cluster.create(cluster.lb("second").editMetadata()
        .withAnnotations(Map.of(VipAnnotations.LOAD_BALANCER_IPS, "192.0.2.50")).endMetadata());
    awaitWarning("second", "AddressUnavailable", "192.0.2.50 is held by Service " + client.getNamespace() + "/first (vip)");
    cluster.create(cluster.lb("outside").editSpec().withLoadBalancerIP("198.51.100.9").endSpec());
    awaitWarning("outside", "AddressUnavailable", "no IPGroup contains 198.51.100.9");
    cluster.create(cluster.lb("third").editMetadata()
        .withAnnotations(Map.of(VipAnnotations.LOAD_BALANCER_IPS, "192.0.2.77")).endMetadata());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("third")).containsExactly("192.0.2.77"));
    assertThat(cluster.ingress("second")).isEmpty();
    assertThat(cluster.ingress("outside")).isEmpty();
    assertThat(cluster.claim("192.0.2.50").getSpec().owner().name()).isEqualTo("first");
  }

  @Test
  void aServiceNamingAPoolGetsItsAddressFromThatPoolAndAnUnmatchedServiceIsToldWhy() {
    cluster.groupOf("gold", List.of("192.0.2.0/28"), 100, Map.of("tier", "gold"));
    cluster.groupOf("silver", List.of("198.51.100.0/28"), 10, null);
    cluster.create(cluster.lb("a"));
    cluster.create(cluster.lb("b").editMetadata().withLabels(Map.of("tier", "gold")).endMetadata());
    cluster.create(cluster.lb("c").editMetadata().withLabels(Map.of("tier", "gold"))
        .withAnnotations(Map.of(VipAnnotations.IP_GROUP, "silver")).endMetadata());
    cluster.create(cluster.lb("d").editMetadata().withAnnotations(Map.of(VipAnnotations.IP_GROUP, "bronze")).endMetadata());
    await().atMost(WAIT).untilAsserted(() -> {
      // a (no tier label) and c (naming silver) share silver, in whichever order they come
      assertThat(cluster.ingress("a")).hasSize(1);
      assertThat(cluster.ingress("c")).hasSize(1);
      assertThat(List.of(cluster.ingress("a").get(0), cluster.ingress("c").get(0)))
          .containsExactlyInAnyOrder("198.51.100.1", "198.51.100.2");
      assertThat(cluster.ingress("b")).containsExactly("192.0.2.1");
    });
    awaitWarning("d", "NoPool", "IPGroup bronze does not exist");
  }

  @Test
  void preferDualStackGetsAnAddressOfEachFamily() {
    cluster.groupOf("ds", List.of("192.0.2.0/29", "2001:db8:1::/64"), null, null);
    cluster.create(cluster.lb("ds").editSpec().withIpFamilyPolicy("PreferDualStack").endSpec());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("ds")).containsExactly("192.0.2.1", "2001:db8:1::1")); // :: is anycast
    assertThat(cluster.claim("2001:db8:1::1").getSpec().owner().name()).isEqualTo("ds");
    assertThat(cluster.claim("192.0.2.1").getSpec().owner().name()).isEqualTo("ds");
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.group("ds").getStatus().families())
        .anySatisfy(f -> {
          assertThat(f.family()).isEqualTo("IPv6");
          assertThat(f.total()).isEqualTo("18446744073709551359"); // 2^64 less 257 anycast addresses
          assertThat(f.used()).isEqualTo("1");
        }));
  }

  /**
   * A Service that cannot have all it asks for holds nothing new: its free IPv4 address is not
   * claimed while its requested IPv6 address is another's (a claim it would not publish is a leak
   * for as long as it waits). It gets both once the other lets go.
   */
  @Test
  void aServiceMissingOneFamilyClaimsNoneOfItsNewAddresses() {
    cluster.groupOf("ds", List.of("192.0.2.0/29", "2001:db8:1::/64"), null, null);
    cluster.create(cluster.lb("holder").editMetadata()
        .withAnnotations(Map.of(VipAnnotations.LOAD_BALANCER_IPS, "192.0.2.3,2001:db8:1::5")).endMetadata()
        .editSpec().withIpFamilyPolicy("PreferDualStack").endSpec());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("holder"))
        .containsExactly("192.0.2.3", "2001:db8:1::5"));
    cluster.create(cluster.lb("late").editMetadata()
        .withAnnotations(Map.of(VipAnnotations.LOAD_BALANCER_IPS, "192.0.2.4,2001:db8:1::5")).endMetadata()
        .editSpec().withIpFamilyPolicy("PreferDualStack").endSpec());
    awaitWarning("late", "AddressUnavailable", "2001:db8:1::5");
    assertThat(cluster.ingress("late")).isEmpty();
    assertThat(cluster.claim("192.0.2.4")).as("claimed but not published").isNull();

    cluster.delete("holder");
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("late"))
        .containsExactly("192.0.2.4", "2001:db8:1::5"));
    assertThat(cluster.claim("192.0.2.4").getSpec().owner().name()).isEqualTo("late");
  }

  @Test
  void exhaustionIsReportedAndResolvesWhenAServiceIsDeleted() {
    cluster.group("tiny", "192.0.2.0/30", List.of());
    cluster.create(cluster.lb("one"));
    await().atMost(WAIT).until(() -> !cluster.ingress("one").isEmpty());
    cluster.create(cluster.lb("two"));
    await().atMost(WAIT).until(() -> !cluster.ingress("two").isEmpty());
    cluster.create(cluster.lb("three"));
    awaitWarning("three", "PoolExhausted", "tiny: no free IPv4 address");
    assertThat(cluster.ingress("three")).isEmpty();
    String freed = cluster.ingress("one").get(0);
    cluster.delete("one");
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("three")).containsExactly(freed));
    assertThat(cluster.service("one")).isNull();
    assertThat(cluster.claim(freed).getSpec().owner().name()).isEqualTo("three");
  }

  @Test
  void deletionAndATypeChangeReleaseTheClaim() {
    cluster.group("p1", "192.0.2.0/28", List.of());
    cluster.create(cluster.lb("gone"));
    cluster.create(cluster.lb("demoted"));
    await().atMost(WAIT).until(() -> !cluster.ingress("gone").isEmpty() && !cluster.ingress("demoted").isEmpty());
    String a = cluster.ingress("gone").get(0);
    String b = cluster.ingress("demoted").get(0);
    cluster.delete("gone");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.service("gone")).isNull();
      assertThat(cluster.claim(a)).isNull();
    });
    client.services().withName("demoted").edit(s -> {
      s.getSpec().setType("ClusterIP");
      s.getSpec().setAllocateLoadBalancerNodePorts(null);
      return s;
    });
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.claim(b)).isNull();
      assertThat(cluster.ingress("demoted")).isEmpty();
      assertThat(cluster.service("demoted").getMetadata().getFinalizers()).isNullOrEmpty();
    });
  }

  @Test
  void aRestartOfTheOperatorKeepsEveryAddress() {
    cluster.group("p1", "192.0.2.0/27", List.of());
    for (int i = 0; i < 6; i++) {
      cluster.create(cluster.lb("s" + i));
    }
    Map<String, String> before = new HashMap<>();
    await().atMost(WAIT).untilAsserted(() -> {
      for (int i = 0; i < 6; i++) {
        assertThat(cluster.ingress("s" + i)).hasSize(1);
      }
    });
    for (int i = 0; i < 6; i++) {
      before.put("s" + i, cluster.ingress("s" + i).get(0));
    }
    operator.stop();
    // While it is down: one Service's status is wiped (as by a backup restore), and a new one arrives.
    client.services().withName("s0").editStatus(s -> {
      s.getStatus().getLoadBalancer().setIngress(null);
      return s;
    });
    cluster.create(cluster.lb("late"));
    operator = VipCluster.startOperator(server);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.ingress("late")).hasSize(1);
      assertThat(cluster.ingress("s0")).containsExactly(before.get("s0"));
    });
    for (int i = 0; i < 6; i++) {
      assertThat(cluster.ingress("s" + i)).containsExactly(before.get("s" + i));
    }
    assertThat(before.values()).doesNotContain(cluster.ingress("late").get(0));
    assertThat(cluster.claims()).hasSize(7);
    assertThat(new HashSet<>(cluster.claims().stream().map(c -> c.getSpec().address()).toList())).hasSize(7);
  }

  @Test
  void aClaimDeletedByHandIsTakenBackForTheSameAddress() {
    cluster.group("p1", "192.0.2.0/28", List.of());
    cluster.create(cluster.lb("web"));
    await().atMost(WAIT).until(() -> !cluster.ingress("web").isEmpty());
    String ip = cluster.ingress("web").get(0);
    String uid = cluster.claim(ip).getMetadata().getUid();
    client.resources(IPClaim.class).withName(ip).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      IPClaim again = cluster.claim(ip);
      assertThat(again).isNotNull();
      assertThat(again.getMetadata().getUid()).isNotEqualTo(uid);
      assertThat(again.getSpec().owner().name()).isEqualTo("web");
    });
    assertThat(cluster.ingress("web")).containsExactly(ip);
  }
}
