package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.network.NetworkWrite;
import org.ipamoperators.egressip.network.OvnWriter;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * OVN-Kubernetes (reference scenario 49): no HostSubnet API, so the controller finds OVN's EgressIP
 * API and writes one EgressIP per namespace plus the egress-assignable node label.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"}, thirdPartyCrds = ThirdPartyCrd.EGRESS_IP)
class OvnEgressIT {
  private static final ResourceDefinitionContext EGRESS_IP = new ResourceDefinitionContext.Builder()
      .withGroup("k8s.ovn.org").withVersion("v1").withKind("EgressIP").withPlural("egressips").withNamespaced(false).build();
  private Operator operator;
  private EgressCluster cluster;
  private KubernetesClient client;

  @BeforeAll
  static void noSdnHere(KubeApiServer server) {
    EgressCluster.withoutOpenShiftSdn(server);
  }

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client, TestInfo info) {
    this.client = client;
    cluster = new EgressCluster(client, "ovn" + Integer.toHexString(info.getDisplayName().hashCode() & 0xfff), false);
    operator = SdnEgressIT.startOperator(server);
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  private GenericKubernetesResource egressIp(String ns) {
    return client.genericKubernetesResources(EGRESS_IP).withName("egressipam-" + cluster.n(ns)).get();
  }

  private boolean assignable(String node) {
    Node n = client.nodes().withName(cluster.n(node)).get();
    return n.getMetadata().getLabels().containsKey(EgressAnnotations.OVN_EGRESS_ASSIGNABLE);
  }

  @Test
  @SuppressWarnings("unchecked")
  void eachNamespaceGetsAnEgressIpObjectAndSelectedNodesAreAssignable() {
    String ipam = cluster.n("ovn");
    cluster.node("a1", Map.of("zone", "a", "egress", "yes"));
    cluster.node("b1", Map.of("zone", "b", "egress", "yes"));
    cluster.node("x1", Map.of("zone", "a")); // not selected
    cluster.ipam(ipam, "zone", Map.of("egress", "yes"), null, null, cidr("192.0.2.0/24", "a"),
        cidr("2001:db8:ee::/64", "b"));
    cluster.namespace("web", ipam, null);
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      GenericKubernetesResource e = egressIp("web");
      assertThat(e).isNotNull();
      Map<String, Object> spec = (Map<String, Object>) e.getAdditionalProperties().get("spec");
      assertThat((List<String>) spec.get("egressIPs")).containsExactly("192.0.2.1", "2001:db8:ee::1"); // not ::, the Subnet-Router anycast address
      assertThat(spec.get("namespaceSelector")).isEqualTo(
          Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", cluster.n("web"))));
      assertThat(e.getMetadata().getLabels()).containsEntry(EgressAnnotations.MANAGED_BY, ipam);
      assertThat(assignable("a1")).isTrue();
      assertThat(assignable("b1")).isTrue();
      assertThat(assignable("x1")).isFalse();
      EgressIPAM x = client.resources(EgressIPAM.class).withName(ipam).get();
      assertThat(x.getStatus()).isNotNull();
      assertThat(x.getStatus().networkType()).isEqualTo("OVNKubernetes");
    });
    assertThat(cluster.egressIps("web")).isEqualTo("192.0.2.1,2001:db8:ee::1");

    // leaving the selector removes our label; opting out removes the EgressIP
    cluster.label("b1", "egress", null);
    cluster.annotate("web", EgressAnnotations.EGRESSIPAM, null);
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      assertThat(assignable("b1")).isFalse();
      assertThat(egressIp("web")).isNull();
      assertThat(cluster.egressIps("web")).isNull();
    });
  }

  @Test
  void anEgressIpWeDidNotCreateIsNeverOverwritten() {
    String ipam = cluster.n("foreign");
    cluster.node("a1", Map.of("zone", "a"));
    client.genericKubernetesResources(EGRESS_IP).resource(new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
        .withApiVersion("k8s.ovn.org/v1").withKind("EgressIP").withNewMetadata()
        .withName("egressipam-" + cluster.n("ns1")).endMetadata()
        .addToAdditionalProperties("spec", Map.of("egressIPs", List.of("198.51.100.200"),
            "namespaceSelector", Map.of("matchLabels", Map.of("team", "x"))))
        .build()).create();
    cluster.ipam(ipam, "zone", null, null, null, cidr("192.0.2.0/24", "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      EgressIPAM x = client.resources(EgressIPAM.class).withName(ipam).get();
      assertThat(x.getStatus()).isNotNull();
      assertThat(x.getStatus().conditions()).anySatisfy(c -> assertThat(c.getMessage()).contains("is not managed by EgressIPAM"));
    });
    @SuppressWarnings("unchecked")
    Map<String, Object> spec = (Map<String, Object>) egressIp("ns1").getAdditionalProperties().get("spec");
    assertThat(spec.get("egressIPs")).isEqualTo(List.of("198.51.100.200"));
    client.genericKubernetesResources(EGRESS_IP).withName("egressipam-" + cluster.n("ns1")).delete();
  }

  private GenericKubernetesResource ours(String ipam, String ns, String ip) {
    return new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
        .withApiVersion("k8s.ovn.org/v1").withKind("EgressIP").withNewMetadata().withName("egressipam-" + ns)
        .addToLabels(EgressAnnotations.MANAGED_BY, ipam).endMetadata()
        .addToAdditionalProperties("spec", Map.of("egressIPs", List.of(ip),
            "namespaceSelector", Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", ns))))
        .build();
  }

  @SuppressWarnings("unchecked")
  private Map<String, List<String>> shown(String ipam) {
    Map<String, List<String>> out = new TreeMap<>();
    for (GenericKubernetesResource e : client.genericKubernetesResources(EGRESS_IP)
        .withLabel(EgressAnnotations.MANAGED_BY, ipam).list().getItems()) {
      Map<String, Object> spec = (Map<String, Object>) e.getAdditionalProperties().get("spec");
      out.put(e.getMetadata().getName().substring("egressipam-".length()), (List<String>) spec.get("egressIPs"));
    }
    return out;
  }

  @Test
  @SuppressWarnings("unchecked")
  void writesGoingOutSideBySideEachCarryTheirVersionAndReportTheirOwnFailure() {
    // The EgressIP writes go out side by side: each update is still conditioned on the view it was computed
    // from, so one changed by another writer meanwhile is reported (409), not overwritten; the next pass,
    // from a fresh view, writes it. One failure never hides another, and the writer returns when all are done.
    String ipam = cluster.n("par");
    int count = 40;
    var egressIps = client.genericKubernetesResources(EGRESS_IP);
    Map<String, List<Ip>> wanted = new TreeMap<>();
    for (int i = 0; i < count; i++) {
      String ns = cluster.n("par" + i);
      wanted.put(ns, List.of(Ip.parse("192.0.2." + (i + 1))));
      egressIps.resource(ours(ipam, ns, "192.0.2." + (101 + i))).create(); // an older decision
    }
    String gone = cluster.n("par-gone"); // ours, no longer served: deleted
    egressIps.resource(ours(ipam, gone, "192.0.2.250")).create();
    String fresh = cluster.n("par-new"); // served, no EgressIP yet: created
    wanted.put(fresh, List.of(Ip.parse("192.0.2.200")));
    List<GenericKubernetesResource> view = egressIps.withLabel(EgressAnnotations.MANAGED_BY, ipam).list().getItems();
    Map<String, String> changed = new TreeMap<>(); // namespace to the other writer's address
    for (int i = 0; i < count; i += 4) { // after the view was taken: their updates meet a 409
      String ns = cluster.n("par" + i);
      String other = "198.51.100." + (i + 1);
      changed.put(ns, other);
      egressIps.withName("egressipam-" + ns).edit(x -> {
        ((Map<String, Object>) x.getAdditionalProperties().get("spec")).put("egressIPs", List.of(other));
        return x;
      });
    }
    String missing = cluster.n("par1"); // deleted by someone after the view was taken: its update fails
    egressIps.withName("egressipam-" + missing).delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> egressIps.withName("egressipam-" + missing).get() == null);
    NetworkWrite write = new NetworkWrite(ipam, List.of(IpRange.parse("192.0.2.0/24")), wanted, Set.of(), Map.of(),
        Map.of(), Set.of());
    List<GenericKubernetesResource> told = Collections.synchronizedList(new ArrayList<>());
    List<String> deleted = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      OvnWriter stale = new OvnWriter(client, new OvnWriter.View() {
        @Override
        public Collection<GenericKubernetesResource> mine(String name) {
          return view;
        }

        @Override
        public void wrote(GenericKubernetesResource written) {
          told.add(written);
        }

        @Override
        public void deleted(String name, String resourceVersion) {
          deleted.add(name);
        }
      }, pool);
      List<String> failures = stale.apply(write, List.of());
      // returned only once every write answered: all shown now, no later write lands
      Map<String, List<String>> after = shown(ipam);
      assertThat(failures).as(String.join("\n", failures)).hasSize(changed.size() + 1);
      for (String ns : changed.keySet()) {
        assertThat(failures).as(ns).anySatisfy(f -> assertThat(f).startsWith("EgressIP egressipam-" + ns + ": ")
            .contains("409"));
        assertThat(after.get(ns)).as("another writer's value, not overwritten from a stale view: " + ns)
            .containsExactly(changed.get(ns));
      }
      assertThat(failures).anySatisfy(f -> assertThat(f).startsWith("EgressIP egressipam-" + missing + ": ")
          .contains("404"));
      assertThat(after).doesNotContainKeys(gone, missing);
      assertThat(deleted).containsExactly("egressipam-" + gone);
      wanted.forEach((ns, ips) -> {
        if (!changed.containsKey(ns) && !ns.equals(missing)) {
          assertThat(after.get(ns)).as(ns).containsExactly(ips.get(0).toString());
        }
      });
      assertThat(told).as("each object written told once").hasSize(count - changed.size() - 1 + 1);

      // the next pass, from a fresh view: every EgressIP as wanted, nothing reported
      assertThat(new OvnWriter(client, OvnWriter.listing(client), pool).apply(write, List.of())).isEmpty();
      Map<String, List<String>> expected = new TreeMap<>();
      wanted.forEach((ns, ips) -> expected.put(ns, List.of(ips.get(0).toString())));
      assertThat(shown(ipam)).isEqualTo(expected);
    } finally {
      pool.shutdown();
      egressIps.withLabel(EgressAnnotations.MANAGED_BY, ipam).delete();
    }
  }

  @Test
  void aCreateAnsweredConflictOnOurOwnEgressIpIsNotForeign() {
    // A view (an informer) that has not seen our own EgressIPs yet: the creates meet a 409, the writer reads
    // the object again and, being ours, brings it to the decision (or leaves it) instead of calling it foreign.
    String ipam = cluster.n("lag");
    var egressIps = client.genericKubernetesResources(EGRESS_IP);
    String behind = cluster.n("behind"); // ours, an older decision
    String same = cluster.n("same"); // ours, already as decided
    String foreign = cluster.n("foreign"); // someone else's
    egressIps.resource(ours(ipam, behind, "192.0.2.9")).create();
    egressIps.resource(ours(ipam, same, "192.0.2.2")).create();
    GenericKubernetesResource other = ours(ipam, foreign, "198.51.100.7");
    other.getMetadata().setLabels(Map.of("team", "x"));
    egressIps.resource(other).create();
    try {
      NetworkWrite write = new NetworkWrite(ipam, List.of(IpRange.parse("192.0.2.0/24")),
          new TreeMap<>(Map.of(behind, List.of(Ip.parse("192.0.2.1")), same, List.of(Ip.parse("192.0.2.2")),
              foreign, List.of(Ip.parse("192.0.2.3")))), Set.of(), Map.of(), Map.of(), Set.of());
      List<String> told = Collections.synchronizedList(new ArrayList<>());
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        List<String> failures = new OvnWriter(client, new OvnWriter.View() {
          @Override
          public Collection<GenericKubernetesResource> mine(String name) {
            return List.of();
          }

          @Override
          public void wrote(GenericKubernetesResource written) {
            told.add(written.getMetadata().getName());
          }
        }, pool).apply(write, List.of());
        assertThat(failures).containsExactly(
            "EgressIP egressipam-" + foreign + " exists and is not managed by EgressIPAM " + ipam);
      } finally {
        pool.shutdown();
      }
      assertThat(shown(ipam)).isEqualTo(Map.of(behind, List.of("192.0.2.1"), same, List.of("192.0.2.2")));
      assertThat(told).as("the view is told of both, so the next pass does not create them again")
          .containsExactlyInAnyOrder("egressipam-" + behind, "egressipam-" + same);
    } finally {
      egressIps.withLabel(EgressAnnotations.MANAGED_BY, ipam).delete();
      egressIps.withName("egressipam-" + foreign).delete();
    }
  }

  /** LIST requests for EgressIPs the API server served so far (its own apiserver_request_total). */
  private double egressIpLists() {
    double total = 0;
    java.util.regex.Matcher m = java.util.regex.Pattern.compile(
        "^apiserver_request_total\\{([^}]*)\\} ([0-9.e+]+)$", java.util.regex.Pattern.MULTILINE)
        .matcher(client.raw("/metrics"));
    while (m.find()) {
      if (m.group(1).contains("resource=\"egressips\"") && m.group(1).contains("verb=\"LIST\"")) {
        total += Double.parseDouble(m.group(2));
      }
    }
    return total;
  }

  @Test
  @SuppressWarnings("unchecked")
  void passesReadOurEgressIpsFromTheWatchAndAHandEditIsRepaired() {
    // The controller watches its EgressIPs (label-selected): passes list none, and an edit starts a pass.
    String ipam = cluster.n("edit");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.ipam(ipam, "zone", null, null, null, cidr("192.0.2.0/24", "a"));
    cluster.namespace("web", ipam, null);
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(spec(egressIp("web")).get("egressIPs"))
        .isEqualTo(List.of("192.0.2.1")));
    double lists = egressIpLists();
    for (int i = 0; i < 3; i++) {
      cluster.namespace("more" + i, ipam, null);
    }
    client.genericKubernetesResources(EGRESS_IP).withName("egressipam-" + cluster.n("web")).edit(x -> {
      ((Map<String, Object>) x.getAdditionalProperties().get("spec")).put("egressIPs", List.of("192.0.2.77"));
      return x;
    });
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
      assertThat(spec(egressIp("web")).get("egressIPs")).isEqualTo(List.of("192.0.2.1"));
      for (int i = 0; i < 3; i++) {
        assertThat(egressIp("more" + i)).isNotNull();
      }
    });
    assertThat(egressIpLists()).as("EgressIPs listed by the passes").isEqualTo(lists);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(GenericKubernetesResource e) {
    return e == null ? Map.of() : (Map<String, Object>) e.getAdditionalProperties().get("spec");
  }
}
