package org.ipamoperators.cli;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnetBuilder;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespaceBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.assertj.core.api.SoftAssertions;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.testsupport.crds.CrdInstaller;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.WriteRefusal;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The apiserver refuses writes to one publication surface (a ValidatingAdmissionPolicy, {@link WriteRefusal}) for a
 * seeded period while an owner leaves, moves or its pool is deleted. The rule checked at every snapshot of every
 * surface (one etcd revision, about every 120 ms): no address shown by two holders, and every address an owner
 * shows is held for it in the ledger (released only after every surface that showed it is confirmed clear, a new
 * holder published only after the old is clear). After the refusal is lifted, the refused write must go through
 * (retried) and everything converge within a bound; egress also reports the refused object on the EgressIPAM
 * (Ready=False or Degraded=True naming it) and in an Event. Runs on an apiserver of its own (OpenShift SDN's CRDs
 * installed, which would change what other test classes' egress operators detect). The seed
 * ({@code -Dipam.reliability.seed}) draws each window's length (15-20 s, or {@code -Dipam.reliability.refusalSeconds}
 * as the shortest).
 */
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
class WriteRefusalIT {
  private static final long SEED = Long.getLong("ipam.reliability.seed", System.nanoTime());
  private static final int SHORTEST = Integer.getInteger("ipam.reliability.refusalSeconds", 15);
  private static final Duration CONVERGE = Duration.ofSeconds(30);
  private static final String PROBE = "refusal-probe";
  private static final String ZONE = "refusal-zone";
  private static KubeApiServer server;
  private static KubernetesClient client;
  private static int hostIp = 10;
  private final Replicas replicas = new Replicas();

  @BeforeAll
  static void apiserver() {
    server = KubeApiServer.startPrivate();
    client = server.newClient();
    CrdInstaller.install(client, "META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
        "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml", "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
        "META-INF/fabric8/ipgroups.paas.org-v1.yml", "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml",
        "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml");
    ThirdPartyCrd.install(client, ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE);
    namespace(PROBE);
    client.resource(new NetNamespaceBuilder().withNewMetadata().withName(PROBE).endMetadata().withNetname(PROBE)
        .withNetid(999L).build()).create();
    client.services().inNamespace(PROBE).resource(new ServiceBuilder().withNewMetadata().withName(PROBE)
        .endMetadata().withNewSpec().withType("ClusterIP").addNewPort().withPort(80).endPort().endSpec().build())
        .create();
    client.configMaps().inNamespace(PROBE).resource(new ConfigMapBuilder().withNewMetadata().withName(PROBE)
        .endMetadata().build()).create();
  }

  @AfterAll
  static void stopApiserver() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.stop();
    }
  }

  @AfterEach
  void stopOperator() throws Exception {
    replicas.close();
  }

  /**
   * Seen 1: namespace A holds the only address of its pool; its NetNamespace refuses updates; A opts out and B opts
   * in. B must not be given the address while A's NetNamespace shows it, and A's NetNamespace must be cleared once
   * the refusal is lifted.
   */
  @Test
  void netNamespaceRefusedWhileOneOptsOutAndAnotherOptsIn(@TempDir Path dir) throws Exception {
    Case c = new Case("sdn-optout", dir, 1);
    String x = "198.18.40.1";
    sdnNode("wr1-n1");
    egressIpam("wr1", x + "/32");
    sdnNamespace("wr1-a", "wr1");
    sdnNamespace("wr1-b", null);
    c.start("egressip", Surfaces.egress(client, ip -> ip.startsWith("198.18.40.")).withLedger(), () -> {});
    // One IPv4 CIDR on bare metal: SDN's CIDR mode (the HostSubnet carries the CIDR, SDN places the address).
    c.awaitUntil("A served on its annotation and NetNamespace", () -> x.equals(annotation("wr1-a"))
        && netNamespaceIps("wr1-a").contains(x));
    try (WriteRefusal refusal = c.refuse("network.openshift.io", "netnamespaces", List.of("wr1-a"),
        n -> client.resources(NetNamespace.class).withName(PROBE).edit(o -> label(o.getMetadata(), n, o)))) {
      optIn("wr1-a", null);
      optIn("wr1-b", "wr1");
      c.during(refusal, () -> reported("wr1", "wr1-a"), "EgressIPAM wr1 Ready=False or Degraded=True naming "
          + "NetNamespace wr1-a, and an Event naming it");
    }
    c.converges("B on every surface, A's NetNamespace clear", () -> x.equals(annotation("wr1-b"))
        && netNamespaceIps("wr1-b").equals(List.of(x)) && netNamespaceIps("wr1-a").isEmpty()
        && annotation("wr1-a") == null);
    c.verdict("egressip", "198.18.40.");
  }

  /**
   * Seen 2: removing A's egressips annotation is refused and the EgressIPAM deleted. The IPAM must not be gone, nor
   * A's address released, while A still shows it; once the refusal is lifted the annotation goes, then the IPAM.
   */
  @Test
  void annotationRemovalRefusedWhileTheIpamIsDeleted(@TempDir Path dir) throws Exception {
    Case c = new Case("sdn-delete", dir, 2);
    String x = "198.18.41.9";
    sdnNode("wr2-n1");
    egressIpam("wr2", x + "/32");
    sdnNamespace("wr2-a", "wr2");
    AtomicReference<String> goneWhileShown = new AtomicReference<>();
    c.start("egressip", Surfaces.egress(client, ip -> ip.equals(x)).withLedger(), () -> {
      // The IPAM first, then what is shown: gone then and shown after means gone while shown.
      boolean gone = client.resources(EgressIPAM.class).withName("wr2").get() == null;
      if (gone && goneWhileShown.get() == null && (x.equals(annotation("wr2-a"))
          || netNamespaceIps("wr2-a").contains(x) || hosted("wr2-n1").contains(x))) {
        goneWhileShown.set("EgressIPAM wr2 deleted while " + x + " was still shown (annotation of wr2-a: "
            + annotation("wr2-a") + ", NetNamespace: " + netNamespaceIps("wr2-a") + ", HostSubnet: "
            + hosted("wr2-n1") + ")");
      }
    });
    c.awaitUntil("A served on its annotation and NetNamespace", () -> x.equals(annotation("wr2-a"))
        && netNamespaceIps("wr2-a").contains(x));
    try (WriteRefusal refusal = c.refuse("", "namespaces", List.of("wr2-a"),
        n -> client.namespaces().withName(PROBE).edit(o -> label(o.getMetadata(), n, o)))) {
      client.resources(EgressIPAM.class).withName("wr2").delete();
      c.during(refusal, () -> reported("wr2", "wr2-a"), "EgressIPAM wr2 Ready=False or Degraded=True naming "
          + "namespace wr2-a, and an Event naming it");
    }
    c.converges("the annotation gone, then the IPAM, nothing shown", () -> annotation("wr2-a") == null
        && netNamespaceIps("wr2-a").isEmpty() && !hosted("wr2-n1").contains(x)
        && client.resources(EgressIPAM.class).withName("wr2").get() == null);
    c.soft.assertThat(goneWhileShown.get()).as("deletion completed while the address was published").isNull();
    c.verdict("egressip", x);
  }

  /**
   * vip: Service S holds the address it asked for; S's status refuses updates; S asks for another address and T
   * asks for S's. T must not show, nor be given, S's address while S's status still shows it.
   */
  @Test
  void serviceStatusRefusedWhileItMovesToAnotherAddress(@TempDir Path dir) throws Exception {
    longRunOnly();
    Case c = new Case("vip-move", dir, 3);
    String ns = "wr3";
    namespace(ns);
    ReliabilityFixtures.ipGroup(client, "wr3", "198.18.42.0/30");
    vipService(ns, "s", "wr3", "198.18.42.1");
    c.start("vip", Surfaces.vip(client, ns, ip -> ip.startsWith("198.18.42.")).withLedger(), () -> {});
    c.awaitUntil("S served", () -> ingress(ns, "s").equals(List.of("198.18.42.1")));
    try (WriteRefusal refusal = c.refuse("", "services/status", List.of("s"),
        n -> client.services().inNamespace(PROBE).withName(PROBE).subresource("status")
            .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"status\":{\"conditions\":[{\"type\":\"Probe\","
                + "\"status\":\"True\",\"reason\":\"Probe\",\"message\":\"" + n + "\",\"lastTransitionTime\":\""
                + Instant.now().toString().replaceAll("\\.\\d+Z", "Z") + "\"}]}}"))) {
      client.services().inNamespace(ns).withName("s").edit(s -> {
        s.getMetadata().getAnnotations().put(VipAnnotations.LOAD_BALANCER_IPS, "198.18.42.2");
        return s;
      });
      vipService(ns, "t", "wr3", "198.18.42.1");
      c.during(refusal, () -> true, "");
    }
    c.converges("S on the address it asked for next, T on S's first", () -> ingress(ns, "s").equals(List.of("198.18.42.2"))
        && ingress(ns, "t").equals(List.of("198.18.42.1")));
    c.verdict("vip", "198.18.42.");
  }

  /**
   * keepalived: a Service's VIP moves from group A to group B while A's ConfigMap refuses updates. B's rendered
   * configuration must not carry the VIP while A's still does.
   */
  @Test
  void configMapRefusedWhileAVipMovesToAnotherGroup(@TempDir Path dir) throws Exception {
    longRunOnly();
    Case c = new Case("keepalived-move", dir, 4);
    String ns = "wr4";
    namespace(ns);
    ReliabilityFixtures.keepalivedGroups(client, ns, "wr4-k1", "wr4-keepalived", List.of("wr4-a", "wr4-b"));
    String vip = "198.18.43.1";
    ReliabilityFixtures.keepalivedService(client, ns, "v", "wr4-a", vip);
    c.start("keepalived", Surfaces.keepalived(client, ns, ip -> ip.startsWith("198.18.43.")), () -> {});
    c.awaitUntil("the VIP in A's configuration", () -> configVips(ns, "wr4-a").contains(vip));
    try (WriteRefusal refusal = c.refuse("", "configmaps", List.of("wr4-a"),
        n -> client.configMaps().inNamespace(PROBE).withName(PROBE).edit(o -> label(o.getMetadata(), n, o)))) {
      client.services().inNamespace(ns).withName("v").edit(s -> {
        s.getMetadata().getAnnotations().put(KeepalivedAnnotations.GROUP, ns + "/wr4-b");
        return s;
      });
      c.during(refusal, () -> true, "");
    }
    c.converges("the VIP in B's configuration only", () -> configVips(ns, "wr4-b").contains(vip)
        && !configVips(ns, "wr4-a").contains(vip));
    c.verdict("keepalived", null);
  }

  /**
   * Node failover on SDN: the node hosting A's address fails while its HostSubnet refuses updates. The address must
   * not be on the other node's HostSubnet while the failed node's still shows it (SDN refuses one address on two).
   */
  @Test
  void hostSubnetRefusedWhileItsNodeFails(@TempDir Path dir) throws Exception {
    longRunOnly();
    Case c = new Case("sdn-failover", dir, 6);
    // Two CIDRs: SDN's explicit mode (the operator places each address on a HostSubnet); A holds one of each.
    String x = "198.18.45.1";
    String y = "198.18.45.129";
    sdnNode("wr6-n1");
    sdnNode("wr6-n2");
    egressIpam("wr6", List.of(x + "/32", y + "/32"), 2);
    sdnNamespace("wr6-a", "wr6");
    client.resource(new HostSubnetBuilder().withNewMetadata().withName(PROBE).endMetadata().withHost(PROBE)
        .withHostIP("203.0.113.250").withSubnet("10.250.0.0/23").build()).create();
    c.start("egressip", Surfaces.egress(client, ip -> ip.startsWith("198.18.45."))
        .withLedger(), () -> {});
    c.awaitUntil("A served and hosted", () -> (x + "," + y).equals(annotation("wr6-a"))
        && netNamespaceIps("wr6-a").containsAll(List.of(x, y))
        && (hosted("wr6-n1").contains(x) || hosted("wr6-n2").contains(x)));
    String failing = hosted("wr6-n1").contains(x) ? "wr6-n1" : "wr6-n2";
    String other = failing.equals("wr6-n1") ? "wr6-n2" : "wr6-n1";
    try (WriteRefusal refusal = c.refuse("network.openshift.io", "hostsubnets", List.of(failing),
        n -> client.resources(HostSubnet.class).withName(PROBE).edit(o -> label(o.getMetadata(), n, o)))) {
      notReady(failing);
      c.during(refusal, () -> reported("wr6", failing), "EgressIPAM wr6 Ready=False or Degraded=True naming "
          + "HostSubnet " + failing + ", and an Event naming it");
    }
    c.converges("both addresses on the other node only, A still showing them", () ->
        hosted(other).containsAll(List.of(x, y)) && !hosted(failing).contains(x) && !hosted(failing).contains(y)
        && (x + "," + y).equals(annotation("wr6-a")) && netNamespaceIps("wr6-a").containsAll(List.of(x, y)));
    c.verdict("egressip", "198.18.45.");
  }

  /**
   * A moves from EgressIPAM P to Q while its NetNamespace refuses updates, and C opts in to P. C must not be given A's
   * old address while A's NetNamespace still shows it, and P must never take away what Q published on A.
   */
  @Test
  void netNamespaceRefusedWhileANamespaceMovesToAnotherIpam(@TempDir Path dir) throws Exception {
    longRunOnly();
    Case c = new Case("sdn-move", dir, 7);
    String x = "198.18.46.1";
    String y = "198.18.46.129";
    sdnNode("wr7p-n1");
    sdnNode("wr7q-n1");
    egressIpam("wr7p", x + "/32");
    egressIpam("wr7q", y + "/32");
    sdnNamespace("wr7-a", "wr7p");
    sdnNamespace("wr7-c", null);
    AtomicReference<String> takenAway = new AtomicReference<>();
    java.util.concurrent.atomic.AtomicBoolean shownY = new java.util.concurrent.atomic.AtomicBoolean();
    c.start("egressip", Surfaces.egress(client, ip -> ip.startsWith("198.18.46.")).withLedger(), () -> {
      // Once A showed y (Q's), it keeps showing it: nobody else may remove it.
      String a = annotation("wr7-a");
      if (y.equals(a)) {
        shownY.set(true);
      } else if (shownY.get() && takenAway.get() == null) {
        takenAway.set("A's annotation showed " + y + " (published by wr7q), then " + a);
      }
    });
    c.awaitUntil("A served by wr7p", () -> x.equals(annotation("wr7-a")) && netNamespaceIps("wr7-a").contains(x));
    try (WriteRefusal refusal = c.refuse("network.openshift.io", "netnamespaces", List.of("wr7-a"),
        n -> client.resources(NetNamespace.class).withName(PROBE).edit(o -> label(o.getMetadata(), n, o)))) {
      optIn("wr7-a", "wr7q");
      optIn("wr7-c", "wr7p");
      c.during(refusal, () -> reported("wr7p", "wr7-a"), "EgressIPAM wr7p Ready=False or Degraded=True naming "
          + "NetNamespace wr7-a, and an Event naming it");
    }
    c.converges("A on y and C on x, on every surface", () -> y.equals(annotation("wr7-a"))
        && netNamespaceIps("wr7-a").equals(List.of(y)) && x.equals(annotation("wr7-c"))
        && netNamespaceIps("wr7-c").equals(List.of(x)));
    c.soft.assertThat(takenAway.get()).as("the first IPAM removed what the second published").isNull();
    c.verdict("egressip", "198.18.46.");
  }

  private static void notReady(String node) {
    var n = client.nodes().withName(node).get();
    n.getStatus().setConditions(List.of(new io.fabric8.kubernetes.api.model.NodeConditionBuilder().withType("Ready")
        .withStatus("False").withReason("NodeStatusUnknown").withLastTransitionTime(Instant.now().toString())
        .withLastHeartbeatTime(Instant.now().toString()).build()));
    client.nodes().resource(n).updateStatus();
  }

  /**
   * Seen 1 on OVN-Kubernetes (last: it takes OpenShift SDN's kinds away, so the operator finds OVN): A's EgressIP
   * refuses updates and deletion; A opts out of a full pool and B opts in. B's EgressIP must not carry the address
   * while A's still does.
   */
  @Test
  @org.junit.jupiter.api.Order(Integer.MAX_VALUE)
  void ovnEgressIpRefusedWhileOneOptsOutAndAnotherOptsIn(@TempDir Path dir) throws Exception {
    longRunOnly();
    Case c = new Case("ovn-optout", dir, 5);
    for (ThirdPartyCrd sdn : List.of(ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE)) {
      client.apiextensions().v1().customResourceDefinitions().withName(sdn.crdName()).delete();
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> !client.supports(HostSubnet.class));
    ThirdPartyCrd.install(client, ThirdPartyCrd.EGRESS_IP);
    client.genericKubernetesResources(Surfaces.OVN_EGRESS_IP).resource(client.getKubernetesSerialization()
        .unmarshal("""
            apiVersion: k8s.ovn.org/v1
            kind: EgressIP
            metadata:
              name: %s
            spec:
              egressIPs: ["192.0.2.250"]
              namespaceSelector:
                matchLabels:
                  kubernetes.io/metadata.name: %s
            """.formatted(PROBE, PROBE), io.fabric8.kubernetes.api.model.GenericKubernetesResource.class)).create();
    String x = "198.18.44.1";
    EgressFixtures.readyNode(client, "wr5-n1", Map.of(ZONE, "wr5"));
    egressIpam("wr5", x + "/32");
    for (String ns : List.of("wr5-a", "wr5-b")) {
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
    }
    optIn("wr5-a", "wr5");
    c.start("egressip", Surfaces.egress(client, ip -> ip.startsWith("198.18.44.")).withLedger(), () -> {});
    c.awaitUntil("A served on its annotation and EgressIP", () -> x.equals(annotation("wr5-a"))
        && ovnIps("wr5-a").contains(x));
    try (WriteRefusal refusal = c.refuse("k8s.ovn.org", "egressips", List.of("egressipam-wr5-a"),
        n -> client.genericKubernetesResources(Surfaces.OVN_EGRESS_IP).withName(PROBE)
            .edit(o -> label(o.getMetadata(), n, o)))) {
      optIn("wr5-a", null);
      optIn("wr5-b", "wr5");
      c.during(refusal, () -> reported("wr5", "egressipam-wr5-a"), "EgressIPAM wr5 Ready=False or "
          + "Degraded=True naming EgressIP egressipam-wr5-a, and an Event naming it");
    }
    c.converges("B on its annotation and EgressIP, A's EgressIP gone", () -> x.equals(annotation("wr5-b"))
        && ovnIps("wr5-b").equals(List.of(x)) && ovnIps("wr5-a").isEmpty() && annotation("wr5-a") == null);
    c.verdict("egressip", "198.18.44.");
  }

  /** One case: its seeded window, its operator, its watcher, and what it saw, asserted softly at the end. */
  private final class Case {
    final String name;
    final Path dir;
    final Duration window;
    final SoftAssertions soft = new SoftAssertions();
    final SnapshotCheck checks = new SnapshotCheck();
    final List<String> notes = new ArrayList<>();
    SnapshotWatcher watcher;
    Surfaces surfaces;
    Process operator;
    Instant lifted;
    Duration converged;

    Case(String name, Path dir, int n) {
      this.name = name;
      this.dir = dir;
      long seed = SEED + n;
      this.window = Duration.ofSeconds(SHORTEST).plusMillis(new Random(seed).nextInt(5_000));
      System.out.printf("[write-refusal] %s seed %d window %d ms%n", name, seed, window.toMillis());
    }

    void start(String controllers, Surfaces surfaces, Runnable afterEach) throws Exception {
      this.surfaces = surfaces;
      Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
      operator = replicas.start(dir, kubeconfig, PROBE, controllers, null, "operator");
      replicas.awaitReady(operator, "ok");
      watcher = SnapshotWatcher.start("write-refusal " + name, checks, Map::of, surfaces, afterEach);
    }

    void awaitUntil(String what, BooleanSupplier done) {
      try {
        await(what).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
            .failFast(() -> !operator.isAlive()).until(done::getAsBoolean);
      } catch (org.awaitility.core.ConditionTimeoutException | org.awaitility.core.TerminalFailureException e) {
        throw new AssertionError(what + " not reached; shown now: " + surfaces.read() + "; operator log:\n"
            + logTail(), e);
      }
    }

    String logTail() {
      StringBuilder b = new StringBuilder();
      for (String ext : List.of(".out", ".err")) {
        try {
          List<String> lines = java.nio.file.Files.readAllLines(dir.resolve("operator" + ext));
          lines.subList(Math.max(0, lines.size() - 25), lines.size()).forEach(l -> b.append(l).append('\n'));
        } catch (java.io.IOException e) {
          b.append("(no ").append(ext).append(")\n");
        }
      }
      return b.toString();
    }

    WriteRefusal refuse(String group, String resource, List<String> names, java.util.function.IntConsumer probe) {
      WriteRefusal r = WriteRefusal.start(client, "refuse-" + name, group, resource, names, PROBE, probe);
      notes.add("refusing UPDATE of " + resource + " " + names + " from " + r.effective());
      return r;
    }

    /** Keeps the refusal for the case's window; {@code reported} must come true within it (when not blank). */
    void during(WriteRefusal refusal, BooleanSupplier reported, String what) throws InterruptedException {
      Instant end = refusal.effective().plus(window);
      Instant seen = null;
      while (Instant.now().isBefore(end)) {
        if (seen == null && reported.getAsBoolean()) {
          seen = Instant.now();
        }
        Thread.sleep(200);
      }
      if (!what.isBlank()) {
        soft.assertThat(seen).as("during the refusal: %s", what).isNotNull();
      }
      notes.add("window " + refusal.window().toMillis() + " ms"
          + (what.isBlank() ? "" : ", reported " + (seen == null ? "never" : Duration.between(refusal.effective(),
              seen).toMillis() + " ms in")));
    }

    void converges(String what, BooleanSupplier done) {
      lifted = Instant.now();
      try {
        await(what).atMost(CONVERGE).pollInterval(Duration.ofMillis(200)).until(done::getAsBoolean);
        converged = Duration.between(lifted, Instant.now());
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        soft.fail("not converged within %s after the refusal was lifted: %s; shown then: %s", CONVERGE, what,
            surfaces.read());
        System.out.println("[write-refusal] " + name + " not converged; operator log:\n" + logTail());
      }
    }

    void verdict(String controller, String range) throws Exception {
      watcher.stop();
      checks.check(surfaces.read(), surfaces.readsLedger());
      surfaces.close();
      String summary = String.format("%s: %s; %d snapshots (mean read %d ms), converged %s after the lift; "
          + "two holders: %s; shown while not held: %s", name, String.join(", ", notes), watcher.taken(),
          watcher.meanReadMillis(), converged == null ? "never" : converged.toMillis() + " ms",
          checks.duplicates(), checks.unclaimed());
      System.out.println("[write-refusal] " + summary);
      soft.assertThat(checks.duplicates()).as("an address shown by two holders at one revision").isEmpty();
      soft.assertThat(checks.unclaimed()).as("an address shown while the ledger did not hold it for its holder")
          .isEmpty();
      if (range != null) {
        soft.assertThat(LedgerFindings.settled(client, Set.of(controller), LedgerFindings.onResources(range),
            Duration.ofSeconds(15))).as("audit findings after convergence").isEmpty();
      }
      soft.assertThat(operator.isAlive()).as("operator running").isTrue();
      soft.assertAll();
    }
  }

  /** The two cases of the issue run by default (about a minute each); the others in the long run only. */
  private static void longRunOnly() {
    org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.getBoolean("ipam.reliability.long"),
        "in the long reliability run (-Preliability or -Dipam.reliability.long=true): about a minute each");
  }

  // -- the world --

  private static void namespace(String name) {
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
  }

  /** Sets the label {@code probe=n} on {@code o}, whose metadata is {@code meta}; returns {@code o} (for edit). */
  private static <T> T label(ObjectMeta meta, int n, T o) {
    if (meta.getLabels() == null) {
      meta.setLabels(new java.util.HashMap<>());
    }
    meta.getLabels().put("probe", Integer.toString(n));
    return o;
  }

  @SuppressWarnings("unchecked")
  private static List<String> ovnIps(String ns) {
    var e = client.genericKubernetesResources(Surfaces.OVN_EGRESS_IP).withName("egressipam-" + ns).get();
    if (e == null || !(e.getAdditionalProperties().get("spec") instanceof Map<?, ?> spec)) {
      return List.of();
    }
    return spec.get("egressIPs") instanceof List<?> ips ? (List<String>) ips : List.of();
  }

  /**
   * A Ready worker and its HostSubnet, as OpenShift SDN keeps it; in the zone of its case ({@code wr1-n1}: wr1),
   * which only that case's IPAM (named after the case) serves, so the nodes of earlier cases take nothing.
   */
  private static void sdnNode(String name) {
    EgressFixtures.readyNode(client, name, Map.of(ZONE, name.substring(0, name.indexOf('-'))));
    int ip = hostIp++;
    client.resource(new HostSubnetBuilder().withNewMetadata().withName(name).endMetadata().withHost(name)
        .withHostIP("203.0.113." + ip).withSubnet("10.128." + ip + ".0/23").build()).create();
  }

  private static void egressIpam(String name, String cidr) {
    egressIpam(name, List.of(cidr), null);
  }

  private static void egressIpam(String name, List<String> cidrs, Integer failoverGraceSeconds) {
    EgressIPAM ipam = new EgressIPAM();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    ipam.setMetadata(meta);
    ipam.setSpec(new EgressIPAMSpec(cidrs.stream().map(c -> new CIDRAssignment(c, name, null)).toList(), ZONE,
        new LabelSelectorBuilder().build(), null, null, failoverGraceSeconds));
    client.resource(ipam).create();
  }

  /** A namespace (opted in to {@code ipam} unless null) and its NetNamespace, as SDN creates it. */
  private static void sdnNamespace(String name, String ipam) {
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    client.resource(new NetNamespaceBuilder().withNewMetadata().withName(name).endMetadata().withNetname(name)
        .withNetid((long) (2000 + hostIp++)).build()).create();
    if (ipam != null) {
      optIn(name, ipam);
    }
  }

  /** Sets (or, with null, removes) the namespace's egressipam annotation. */
  private static void optIn(String name, String ipam) {
    client.namespaces().withName(name).edit(n -> {
      if (n.getMetadata().getAnnotations() == null) {
        n.getMetadata().setAnnotations(new java.util.HashMap<>());
      }
      if (ipam == null) {
        n.getMetadata().getAnnotations().remove(EgressAnnotations.EGRESSIPAM);
      } else {
        n.getMetadata().getAnnotations().put(EgressAnnotations.EGRESSIPAM, ipam);
      }
      return n;
    });
  }

  private static String annotation(String ns) {
    var n = client.namespaces().withName(ns).get();
    return n == null || n.getMetadata().getAnnotations() == null ? null
        : n.getMetadata().getAnnotations().get(EgressAnnotations.EGRESSIPS);
  }

  private static List<String> netNamespaceIps(String ns) {
    NetNamespace n = client.resources(NetNamespace.class).withName(ns).get();
    return n == null || n.getEgressIPs() == null ? List.of() : n.getEgressIPs();
  }

  private static List<String> hosted(String node) {
    HostSubnet h = client.resources(HostSubnet.class).withName(node).get();
    return h == null || h.getEgressIPs() == null ? List.of() : h.getEgressIPs();
  }

  /**
   * The EgressIPAM says Ready=False or Degraded=True in a message naming {@code object}, and an Event names it
   * (on the IPAM or on the namespace).
   */
  private static boolean reported(String ipam, String object) {
    EgressIPAM i = client.resources(EgressIPAM.class).withName(ipam).get();
    List<Condition> conditions = i == null || i.getStatus() == null || i.getStatus().conditions() == null
        ? List.of() : i.getStatus().conditions();
    boolean condition = conditions.stream().anyMatch(c -> c.getMessage() != null && c.getMessage().contains(object)
        && ("Ready".equals(c.getType()) && "False".equals(c.getStatus())
            || "Degraded".equals(c.getType()) && "True".equals(c.getStatus())));
    boolean event = client.v1().events().inAnyNamespace().list().getItems().stream()
        .anyMatch(e -> e.getMessage() != null && e.getMessage().contains(object)
            && (ipam.equals(e.getInvolvedObject().getName()) || object.equals(e.getInvolvedObject().getName())));
    return condition && event;
  }

  private static void vipService(String ns, String name, String group, String requested) {
    client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName(name)
        .addToAnnotations(VipAnnotations.IP_GROUP, group).addToAnnotations(VipAnnotations.LOAD_BALANCER_IPS, requested)
        .endMetadata()
        .withNewSpec().withType("LoadBalancer").withAllocateLoadBalancerNodePorts(false).addNewPort().withPort(80)
        .withProtocol("TCP").endPort().endSpec().build()).create();
  }

  private static List<String> ingress(String ns, String name) {
    var s = client.services().inNamespace(ns).withName(name).get();
    return s == null || s.getStatus() == null || s.getStatus().getLoadBalancer() == null
        || s.getStatus().getLoadBalancer().getIngress() == null ? List.of()
        : s.getStatus().getLoadBalancer().getIngress().stream().map(i -> i.getIp()).toList();
  }

  private static Set<String> configVips(String ns, String group) {
    var cm = client.configMaps().inNamespace(ns).withName(group).get();
    Set<String> out = new java.util.TreeSet<>();
    if (cm != null && cm.getData() != null) {
      cm.getData().values().forEach(conf -> out.addAll(Surfaces.vips(conf)));
    }
    return out;
  }
}
