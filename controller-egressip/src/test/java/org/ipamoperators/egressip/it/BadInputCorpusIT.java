package org.ipamoperators.egressip.it;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnetBuilder;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespaceBuilder;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.egressip.EgressIPControllers;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.testsupport.corpus.BadInputCorpus;
import org.ipamoperators.testsupport.corpus.BadInputCorpus.Entry;
import org.ipamoperators.testsupport.corpus.CorpusRun;
import org.ipamoperators.testsupport.corpus.ReconcileFailures;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The bad-input corpus ({@code src/test/resources/bad-input/*.yaml}) applied at once, bad and good
 * objects together, to one running operator on OpenShift SDN: each bad object gets what its
 * {@code # expect:} line says (admission refusal, Event, condition), every good namespace is served
 * beside them, and no reconcile throws. The cases live in the files only.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.INFRASTRUCTURE})
class BadInputCorpusIT {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TestFactory
  Stream<DynamicTest> everyBadObjectIsReportedAndEveryGoodOneServed(KubeApiServer server, KubernetesClient client,
      io.fabric8.kubernetes.api.model.Namespace testNamespace) throws Exception {
    List<Entry> corpus = BadInputCorpus.load("bad-input");
    ReconcileFailures failures = new ReconcileFailures();
    KubernetesClient c = server.newClient();
    Operator operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true).withMetrics(failures));
    EgressIPControllers.register(operator, c, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    CorpusRun run = new CorpusRun(client, testNamespace.getMetadata().getName());
    List<String> nodes = new ArrayList<>();
    List<String> namespaces = new ArrayList<>();
    try {
      operator.start();
      long started = System.nanoTime();
      run.apply(corpus);
      int host = 20;
      for (Entry e : corpus) {
        if ("Node".equals(e.kind())) {
          ready(client, e.name());
          client.resources(HostSubnet.class).resource(new HostSubnetBuilder().withNewMetadata().withName(e.name())
              .endMetadata().withHost(e.name()).withHostIP("203.0.113." + host).withSubnet("10.128." + host++ + ".0/23")
              .build()).create();
          nodes.add(e.name());
        } else if ("Namespace".equals(e.kind())) {
          client.resources(NetNamespace.class).resource(new NetNamespaceBuilder().withNewMetadata()
              .withName(e.name()).endMetadata().withNetname(e.name()).withNetid((long) 2000 + namespaces.size())
              .build()).create();
          namespaces.add(e.name());
        }
      }
      Map<Entry, String> failing = run.await(corpus, e -> served(client, e), WAIT);
      System.out.printf("bad-input corpus (egressip): %d entries, converged in %d ms%n", corpus.size(),
          Duration.ofNanos(System.nanoTime() - started).toMillis());
      List<DynamicTest> tests = new ArrayList<>(CorpusRun.verdicts(corpus, failing, failures.byObject()));
      return tests.stream();
    } finally {
      operator.stop();
      for (String n : nodes) {
        client.resources(HostSubnet.class).withName(n).delete();
        client.nodes().withName(n).delete();
      }
      for (String n : namespaces) {
        client.resources(NetNamespace.class).withName(n).delete();
        client.namespaces().withName(n).delete();
      }
    }
  }

  /**
   * A good namespace is served when its egressips annotation is written and its NetNamespace carries
   * it; a bad one holds no claim and no egress IP on its NetNamespace.
   */
  private static String served(KubernetesClient client, Entry e) {
    if (!"Namespace".equals(e.kind())) {
      return null; // an IPAM is served through its namespaces
    }
    if (e.role() == BadInputCorpus.Role.BAD) {
      List<String> held = client.resources(IPClaim.class).list().getItems().stream()
          .filter(c -> c.getSpec() != null && c.getSpec().owner() != null && e.name().equals(c.getSpec().owner().name()))
          .map(c -> c.getSpec().address()).toList();
      NetNamespace net = client.resources(NetNamespace.class).withName(e.name()).get();
      List<String> onNet = net == null || net.getEgressIPs() == null ? List.of() : net.getEgressIPs();
      return held.isEmpty() && onNet.isEmpty() ? null : "a rejected namespace holds " + held + ", egressIPs " + onNet;
    }
    var ns = client.namespaces().withName(e.name()).get();
    String ips = ns.getMetadata().getAnnotations() == null ? null
        : ns.getMetadata().getAnnotations().get(EgressAnnotations.EGRESSIPS);
    NetNamespace net = client.resources(NetNamespace.class).withName(e.name()).get();
    List<String> onNet = net == null || net.getEgressIPs() == null ? List.of() : net.getEgressIPs();
    if (ips == null || ips.isBlank() || !String.join(",", onNet).equals(ips)) {
      return "not served: egressips=" + ips + ", NetNamespace egressIPs=" + onNet;
    }
    return null;
  }

  private static void ready(KubernetesClient client, String name) {
    Node node = client.nodes().withName(name).get();
    if (node.getStatus() == null) {
      node.setStatus(new NodeStatus());
    }
    node.getStatus().setConditions(List.of(new NodeConditionBuilder().withType("Ready").withStatus("True")
        .withReason("KubeletReady").withLastTransitionTime(Instant.now().toString())
        .withLastHeartbeatTime(Instant.now().toString()).build()));
    client.nodes().resource(node).updateStatus();
  }
}
