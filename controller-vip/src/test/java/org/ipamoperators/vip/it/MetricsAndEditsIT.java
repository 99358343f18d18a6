package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Metrics of pools and Services, edited pools (an address held but no longer offered is reported,
 * never taken away) and a changed request (the Service moves: claim, publish, release), on a real
 * API server.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class MetricsAndEditsIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private Operator operator;
  private VipCluster cluster;
  private KubernetesClient client;
  private SimpleMeterRegistry registry;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    cluster = new VipCluster(client);
    registry = new SimpleMeterRegistry();
    operator = VipCluster.startOperator(server, registry);
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  private Double gauge(String name, String group, String family) {
    Gauge g = registry.find(name).tag("ipgroup", group).tag("family", family).gauge();
    return g == null ? null : g.value();
  }

  private void awaitWarning(String service, String reason, String text) {
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.events(service)).anySatisfy(e -> {
      assertThat(e.getType()).isEqualTo("Warning");
      assertThat(e.getReason()).isEqualTo(reason);
      assertThat(e.getMessage()).contains(text);
    }));
  }

  private static Condition condition(IPGroup g, String type) {
    return g == null || g.getStatus() == null || g.getStatus().conditions() == null ? null
        : g.getStatus().conditions().stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
  }

  @Test
  void poolUsageAllocationsAndPendingServicesAreMeasuredAndADeletedPoolsSeriesGo() {
    cluster.group("p1", "192.0.2.0/29", List.of("192.0.2.1")); // .2-.6 usable: 5
    cluster.group("v6", new IPGroupSpec(null, null, List.of("2001:db8::/126", "198.51.100.0/30"), false, null, null,
        null, null));
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(gauge("ipam_vip_pool_size", "p1", "IPv4")).isEqualTo(5.0);
      assertThat(gauge("ipam_vip_pool_free", "p1", "IPv4")).isEqualTo(5.0);
      assertThat(gauge("ipam_vip_pool_size", "v6", "IPv6")).isEqualTo(3.0); // no broadcast, but :: is anycast
      assertThat(gauge("ipam_vip_pool_size", "v6", "IPv4")).isEqualTo(2.0);
    });
    cluster.create(cluster.lb("a"));
    cluster.create(cluster.lb("b"));
    cluster.create(cluster.lb("waiting").editSpec().withLoadBalancerIP("203.0.113.7").endSpec());
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(gauge("ipam_vip_pool_used", "p1", "IPv4")).isEqualTo(2.0);
      assertThat(gauge("ipam_vip_pool_free", "p1", "IPv4")).isEqualTo(3.0);
      Counter c = registry.find("ipam_vip_allocations").tag("ipgroup", "p1").counter();
      assertThat(c).isNotNull();
      assertThat(c.count()).isEqualTo(2.0);
      assertThat(registry.find("ipam_vip_services_pending").gauge().value()).isEqualTo(1.0);
    });
    cluster.delete("waiting");
    await().atMost(WAIT).untilAsserted(() ->
        assertThat(registry.find("ipam_vip_services_pending").gauge().value()).isEqualTo(0.0));
    client.resources(IPGroup.class).withName("v6").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(gauge("ipam_vip_pool_size", "v6", "IPv6")).isNull();
      assertThat(gauge("ipam_vip_pool_size", "v6", "IPv4")).isNull();
      assertThat(registry.find("ipam_vip_pool_free").tag("ipgroup", "v6").meters()).isEmpty();
    });
    assertThat(gauge("ipam_vip_pool_size", "p1", "IPv4")).isEqualTo(5.0);
  }

  @Test
  void anAddressAnEditTookOutOfItsPoolIsReportedAndKept() {
    cluster.group("p1", "192.0.2.0/28", List.of());
    cluster.create(cluster.lb("web"));
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("web")).containsExactly("192.0.2.1"));
    client.resources(IPGroup.class).withName("p1").edit(g -> {
      g.setSpec(new IPGroupSpec("192.0.2.0/28", List.of("192.0.2.1"), null, null, null, null, null, null));
      return g;
    });
    awaitWarning("web", "AddressOutsidePool", "IPGroup p1 no longer offers it");
    await().atMost(WAIT).untilAsserted(() -> {
      Condition held = condition(cluster.group("p1"), "HeldOutside");
      assertThat(held).isNotNull();
      assertThat(held.getStatus()).isEqualTo("True");
      assertThat(held.getMessage()).contains("192.0.2.1").contains(client.getNamespace() + "/web");
      assertThat(cluster.condition("web").getReason()).isEqualTo("AddressOutsidePool");
      assertThat(cluster.condition("web").getStatus()).isEqualTo("True");
    });
    assertThat(cluster.ingress("web")).containsExactly("192.0.2.1");
    assertThat(cluster.claim("192.0.2.1").getSpec().owner().name()).isEqualTo("web");
    cluster.create(cluster.lb("next"));
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("next")).containsExactly("192.0.2.2"));
    // Moved so that the addresses are outside: still kept, still reported.
    client.resources(IPGroup.class).withName("p1").edit(g -> {
      g.setSpec(new IPGroupSpec("192.0.2.8/29", List.of(), null, null, null, null, null, null));
      return g;
    });
    awaitWarning("next", "AddressOutsidePool", "outside pool");
    assertThat(cluster.ingress("next")).containsExactly("192.0.2.2");
    await().atMost(WAIT).untilAsserted(() -> assertThat(condition(cluster.group("p1"), "HeldOutside").getMessage())
        .contains("2 held address(es)").contains("192.0.2.1 is outside").contains("192.0.2.2 is outside"));
  }

  @Test
  void aChangedRequestMovesTheServiceAndOneThatCannotBeHadKeepsTheOldAddress() {
    cluster.group("p1", "192.0.2.0/28", List.of());
    cluster.create(cluster.lb("mover").editSpec().withLoadBalancerIP("192.0.2.5").endSpec());
    cluster.create(cluster.lb("other").editSpec().withLoadBalancerIP("192.0.2.9").endSpec());
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.ingress("mover")).containsExactly("192.0.2.5");
      assertThat(cluster.ingress("other")).containsExactly("192.0.2.9");
    });
    client.services().withName("mover").edit(s -> {
      s.getSpec().setLoadBalancerIP(null);
      s.getMetadata().setAnnotations(Map.of(VipAnnotations.LOAD_BALANCER_IPS, "192.0.2.6"));
      return s;
    });
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.ingress("mover")).containsExactly("192.0.2.6");
      assertThat(cluster.claim("192.0.2.5")).isNull();
    });
    assertThat(cluster.claim("192.0.2.6").getSpec().owner().name()).isEqualTo("mover");
    // Asking for an address someone else holds: it keeps the one it has and is told why.
    cluster.annotate("mover", VipAnnotations.LOAD_BALANCER_IPS, "192.0.2.9");
    awaitWarning("mover", "AddressKept", "192.0.2.9 is held by Service " + client.getNamespace() + "/other");
    assertThat(cluster.ingress("mover")).containsExactly("192.0.2.6");
    assertThat(cluster.claim("192.0.2.6").getSpec().owner().name()).isEqualTo("mover");
    assertThat(cluster.ingress("other")).containsExactly("192.0.2.9");
  }
}
