package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.EgressIPAMReconciler;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.WriteRefusal;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * One holder at every step, on OpenShift SDN, while the API server refuses a write: an address is
 * released only once every place that showed it (namespace annotation, NetNamespace, HostSubnet) is
 * clear, a refused write is retried until it goes through and is reported meanwhile, an IPAM's
 * deletion waits for what it published, and two overlapping IPAMs never both serve. A sampler
 * reads every namespace surface of the test every 100 ms for the whole test.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.INFRASTRUCTURE})
class OneHolderIT {
  private static final Duration WAIT = Duration.ofSeconds(45);
  private static final Duration REFUSED_FOR = Duration.ofSeconds(15);
  private static final Map<String, String> WORKERS = Map.of("node-role.kubernetes.io/worker", "");
  private Operator operator;
  private EgressCluster cluster;
  private KubernetesClient client;
  private Sampler sampler;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client, TestInfo info) {
    this.client = client;
    cluster = new EgressCluster(client, EgressCluster.prefix(info), true);
    KubernetesClient c = server.newClient();
    operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
    operator.register(new EgressIPAMReconciler(c, Clock.systemUTC(), new SimpleMeterRegistry()));
    operator.start();
    sampler = new Sampler(client, cluster.prefix);
    sampler.start();
  }

  @AfterEach
  void stop() throws InterruptedException {
    sampler.close();
    operator.stop();
    cluster.close();
  }

  @Test
  void aRefusedNetNamespaceClearKeepsTheAddressFromTheNextNamespaceUntilItGoesThrough() throws Exception {
    String ipam = cluster.n("p");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.8/30", "a", "192.0.2.10"));
    cluster.namespace("a", ipam, null);
    await().atMost(WAIT).until(() -> List.of("192.0.2.9").equals(cluster.netNamespaceIps("a")));
    cluster.namespace("b", ipam, null); // the pool has no free address: b waits
    String a = cluster.n("a");
    try (WriteRefusal refusal = WriteRefusal.start(client, cluster.n("refuse-netns"), "network.openshift.io",
        "netnamespaces", List.of(a), a, n -> client.resources(NetNamespace.class).withName(a)
            .edit(x -> { x.getMetadata().setLabels(Map.of("probe", String.valueOf(n))); return x; }))) {
      cluster.annotate("a", EgressAnnotations.EGRESSIPAM, null); // a opts out while its NetNamespace cannot change
      await().atMost(WAIT).until(() -> cluster.egressIps("a") == null);
      long until = System.nanoTime() + REFUSED_FOR.toNanos();
      while (System.nanoTime() < until) {
        assertThat(Ledgers.holder(client, Ip.parse("192.0.2.9")))
            .as("the address stays a's while a's NetNamespace shows it").hasValueSatisfying(
                o -> assertThat(o.name()).isEqualTo(a));
        Thread.sleep(500);
      }
      assertThat(cluster.netNamespaceIps("b")).isEmpty();
      EgressIPAM shown = client.resources(EgressIPAM.class).withName(ipam).get();
      assertThat(EgressCluster.condition(shown, "Degraded")).isEqualTo("True");
      assertThat(shown.getStatus().conditions()).anySatisfy(c -> assertThat(c.getMessage()).contains("NetNamespace " + a));
      assertThat(warnings(ipam)).anySatisfy(m -> assertThat(m).contains("NetNamespace " + a));
    }
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.netNamespaceIps("a")).isEmpty();
      assertThat(cluster.netNamespaceIps("b")).containsExactly("192.0.2.9");
      assertThat(cluster.egressIps("b")).isEqualTo("192.0.2.9");
    });
    await().atMost(WAIT).until(() -> "True".equals(EgressCluster.condition(
        client.resources(EgressIPAM.class).withName(ipam).get(), "Ready")));
    sampler.assertNoTwoHolders();
  }

  @Test
  void anIpamIsDeletedOnlyOnceTheAnnotationItPublishedIsGone() throws Exception {
    String ipam = cluster.n("p");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.8/30", "a", "192.0.2.10"));
    cluster.namespace("a", ipam, null);
    await().atMost(WAIT).until(() -> "192.0.2.9".equals(cluster.egressIps("a"))
        && List.of("192.0.2.9").equals(cluster.netNamespaceIps("a")));
    String a = cluster.n("a");
    try (WriteRefusal refusal = WriteRefusal.start(client, cluster.n("refuse-ns"), "",
        "namespaces", List.of(a), a, n -> client.namespaces().withName(a)
            .edit(x -> { x.getMetadata().setLabels(Map.of("probe", String.valueOf(n))); return x; }))) {
      client.resources(EgressIPAM.class).withName(ipam).delete();
      long until = System.nanoTime() + REFUSED_FOR.toNanos();
      while (System.nanoTime() < until) {
        assertThat(client.resources(EgressIPAM.class).withName(ipam).get())
            .as("the IPAM stays while a shows its address").isNotNull();
        assertThat(Ledgers.holder(client, Ip.parse("192.0.2.9"))).as("a's claim while a shows it").isPresent();
        Thread.sleep(500);
      }
      assertThat(cluster.egressIps("a")).isEqualTo("192.0.2.9");
      assertThat(warnings(ipam)).anySatisfy(m -> assertThat(m).contains(a));
    }
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(client.resources(EgressIPAM.class).withName(ipam).get()).isNull();
      assertThat(cluster.egressIps("a")).isNull();
      assertThat(cluster.netNamespaceIps("a")).isEmpty();
      assertThat(Ledgers.holder(client, Ip.parse("192.0.2.9"))).isEmpty();
    });
    sampler.assertNoTwoHolders();
  }

  @Test
  void aChangedAddressIsReleasedOnlyAfterTheNewOneIsPublished() throws Exception {
    // A manual address changed from .9 to .10 while the namespace's NetNamespace cannot change: the old
    // address stays the namespace's (claimed) as long as its NetNamespace shows it.
    String ipam = cluster.n("p");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.ipam(ipam, "zone", WORKERS, null, null, cidr("192.0.2.8/30", "a"));
    cluster.namespace("a", ipam, "192.0.2.9");
    await().atMost(WAIT).until(() -> List.of("192.0.2.9").equals(cluster.netNamespaceIps("a")));
    String a = cluster.n("a");
    try (WriteRefusal refusal = WriteRefusal.start(client, cluster.n("refuse-netns"), "network.openshift.io",
        "netnamespaces", List.of(a), a, n -> client.resources(NetNamespace.class).withName(a)
            .edit(x -> { x.getMetadata().setLabels(Map.of("probe", String.valueOf(n))); return x; }))) {
      cluster.annotate("a", EgressAnnotations.EGRESSIPS, "192.0.2.10");
      await().atMost(WAIT).until(() -> Ledgers.holder(client, Ip.parse("192.0.2.10")).isPresent());
      cluster.namespace("b", ipam, "192.0.2.9"); // asks for the address a still shows
      long until = System.nanoTime() + REFUSED_FOR.toNanos();
      while (System.nanoTime() < until) {
        assertThat(Ledgers.holder(client, Ip.parse("192.0.2.9"))).hasValueSatisfying(
            o -> assertThat(o.name()).isEqualTo(a));
        Thread.sleep(500);
      }
    }
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.netNamespaceIps("a")).containsExactly("192.0.2.10");
      assertThat(cluster.netNamespaceIps("b")).containsExactly("192.0.2.9");
    });
    sampler.assertNoTwoHolders();
  }

  @Test
  void twoOverlappingIpamsNeverBothServeAndTheHostSubnetsSettle() throws Exception {
    String older = cluster.n("wide");
    String younger = cluster.n("narrow");
    cluster.node("a1", Map.of("zone", "a"));
    cluster.node("a2", Map.of("zone", "a"));
    cluster.ipam(older, "zone", WORKERS, null, null, cidr("192.0.2.0/27", "a"));
    cluster.namespace("w", older, null);
    await().atMost(WAIT).until(() -> cluster.egressIps("w") != null);
    Thread.sleep(1100); // creation times have a resolution of one second; within one, the name would decide
    cluster.ipam(younger, "zone", WORKERS, null, null, cidr("192.0.2.0/28", "a"));
    cluster.namespace("n", younger, null);
    await().atMost(WAIT).untilAsserted(() -> {
      EgressIPAM y = client.resources(EgressIPAM.class).withName(younger).get();
      assertThat(EgressCluster.condition(y, "Ready")).isEqualTo("False");
      assertThat(y.getStatus().conditions()).anySatisfy(c -> assertThat(c.getMessage()).contains(older));
      assertThat(warnings(younger)).anySatisfy(m -> assertThat(m).contains(older).contains("192.0.2.0/27"));
    });
    assertThat(cluster.egressIps("n")).isNull();
    assertThat(EgressCluster.condition(client.resources(EgressIPAM.class).withName(older).get(), "Ready"))
        .isEqualTo("True");
    Map<String, String> before = hostSubnetVersions();
    Thread.sleep(5000); // a flapping pair writes each HostSubnet many times a second
    assertThat(hostSubnetVersions()).as("HostSubnets rewritten while nothing changed").isEqualTo(before);
    client.resources(EgressIPAM.class).withName(older).delete(); // the older gone: the younger serves
    await().atMost(WAIT).until(() -> cluster.egressIps("n") != null);
    sampler.assertNoTwoHolders();
  }

  private Map<String, String> hostSubnetVersions() {
    Map<String, String> out = new TreeMap<>();
    for (String node : List.of("a1", "a2")) {
      out.put(node, client.resources(HostSubnet.class).withName(cluster.n(node)).get().getMetadata()
          .getResourceVersion());
    }
    return out;
  }

  private List<String> warnings(String ipam) {
    return client.v1().events().inNamespace("default").list().getItems().stream()
        .filter(e -> ipam.equals(e.getInvolvedObject().getName()) && "Warning".equals(e.getType()))
        .map(Event::getMessage).toList();
  }

  /**
   * Reads every namespace's published egressips annotation, every NetNamespace and HostSubnet of the test every
   * 100 ms; records any instant where one address is shown by two namespaces (on any of the two surfaces, in any
   * combination), or is on two HostSubnets.
   */
  static final class Sampler extends Thread implements AutoCloseable {
    private final KubernetesClient client;
    private final String prefix;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<String> seen = new CopyOnWriteArrayList<>();
    private volatile int samples;

    Sampler(KubernetesClient client, String prefix) {
      super("one-holder-sampler");
      this.client = client;
      this.prefix = prefix;
      setDaemon(true);
    }

    @Override
    public void run() {
      while (running.get()) {
        try {
          sample();
          samples++;
          Thread.sleep(100);
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException e) {
          // the API server answered badly once: the next sample reads again
        }
      }
    }

    private void sample() {
      Map<String, Set<String>> holders = new HashMap<>();
      for (Namespace n : client.namespaces().list().getItems()) {
        String name = n.getMetadata().getName();
        Map<String, String> a = n.getMetadata().getAnnotations();
        String ips = a == null ? null : a.get(EgressAnnotations.EGRESSIPS);
        // Only what the controller published: a user's own egressips (not yet published) is a request.
        boolean published = a != null && ips != null && ips.equals(a.get(EgressAnnotations.EGRESSIPS_PUBLISHED));
        if (name.startsWith(prefix) && published && !ips.isBlank()) {
          for (String ip : ips.split(",")) {
            holders.computeIfAbsent(ip.trim(), k -> new TreeSet<>()).add(name);
          }
        }
      }
      for (NetNamespace n : client.resources(NetNamespace.class).list().getItems()) {
        if (n.getMetadata().getName().startsWith(prefix) && n.getEgressIPs() != null) {
          n.getEgressIPs().forEach(ip -> holders.computeIfAbsent(ip, k -> new TreeSet<>()).add(n.getMetadata().getName()));
        }
      }
      Map<String, Set<String>> nodes = new HashMap<>();
      for (HostSubnet h : client.resources(HostSubnet.class).list().getItems()) {
        if (h.getMetadata().getName().startsWith(prefix) && h.getEgressIPs() != null) {
          h.getEgressIPs().forEach(ip -> nodes.computeIfAbsent(ip, k -> new TreeSet<>()).add(h.getMetadata().getName()));
        }
      }
      holders.forEach((ip, who) -> {
        if (who.size() > 1) {
          seen.add(ip + " shown by namespaces " + who);
        }
      });
      nodes.forEach((ip, who) -> {
        if (who.size() > 1) {
          seen.add(ip + " on HostSubnets " + who);
        }
      });
    }

    void assertNoTwoHolders() {
      assertThat(samples).as("samples taken").isGreaterThan(10);
      assertThat(new ArrayList<>(seen)).as("instants with two holders").isEmpty();
    }

    @Override
    public void close() throws InterruptedException {
      running.set(false);
      interrupt();
      join(5000);
    }
  }
}
