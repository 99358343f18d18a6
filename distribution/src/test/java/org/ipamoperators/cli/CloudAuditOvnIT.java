package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.ipamoperators.cli.AuditFixtures.kinds;
import static org.ipamoperators.cli.AuditFixtures.message;
import static org.ipamoperators.cli.AuditFixtures.placed;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.SoftAssertions;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.audit.FindingKind;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.ec2.Ec2Client;

/**
 * {@code ipam audit --cloud} on OVN-Kubernetes, against moto's EC2 and a real API server: no HostSubnet routes
 * these addresses; the node each is on comes from the status OVN writes on the EgressIPs the egress controller
 * made ({@code status.items}, written here by the test in ovnkube's place). Addresses are on the nodes'
 * device-index-0 ENIs and in their ownership tags, as the egress operator leaves them. The API server and moto are
 * shared with other test classes, so only this test's addresses (198.51.100.128/26, used by no other test here)
 * and nodes are looked at, each test with addresses of its own (a deleted namespace stays Terminating here, with
 * its annotation); addresses are data only.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = ThirdPartyCrd.EGRESS_IP)
@MotoTest
class CloudAuditOvnIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> ADDRESSES = List.of("198.51.100.140", "198.51.100.141", "198.51.100.142",
      "198.51.100.143", "198.51.100.144", "198.51.100.145", "198.51.100.146", "198.51.100.150", "198.51.100.151");
  private KubernetesClient client;
  private final List<String> nodes = new ArrayList<>();
  private final List<String> namespaces = new ArrayList<>();
  private final Map<String, String> enis = new HashMap<>();

  @AfterEach
  void cleanUp() {
    nodes.forEach(n -> client.nodes().withName(n).delete());
    namespaces.forEach(n -> client.namespaces().withName(n).delete());
    client.resources(IPClaim.class).list().getItems().stream()
        .filter(c -> c.getSpec() != null && ADDRESSES.contains(c.getSpec().address()))
        .forEach(c -> client.resource(c).delete());
    // The EgressIPs, cluster-scoped, go with the test's other cluster-scoped objects.
  }

  @Test
  void ovnsPlacementsAreComparedWithTheInterfaces(KubeApiServer server, KubernetesClient client, Namespace ns,
      MotoServer moto, Ec2Client ec2, @TempDir Path dir) throws Exception {
    this.client = client;
    String op = ns.getMetadata().getName(); // the operator's namespace: the credentials Secret
    String n = shortName(ns);
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    String subnet = awsWorld(ec2, op);
    String a = n + "-o1";
    String b = n + "-o2";
    String c = n + "-o3";
    for (String node : List.of(a, b, c)) {
      worker(ec2, node, subnet);
    }

    // Agree: OVN placed it on a, and it is on a's ENI.
    ovn(n + "-ok", "198.51.100.140", placed(a, "198.51.100.140"));
    attach(ec2, a, "198.51.100.140");
    // Drift: OVN placed it on a, it is on b's ENI.
    ovn(n + "-moved", "198.51.100.141", placed(a, "198.51.100.141"));
    attach(ec2, b, "198.51.100.141");
    // Duplicate: OVN placed it on a, it is on a's ENI and c's.
    ovn(n + "-twice", "198.51.100.142", placed(a, "198.51.100.142"));
    attach(ec2, a, "198.51.100.142");
    attach(ec2, c, "198.51.100.142");
    // A stale status item: .143 moved from "old" to "new", whose status says a; "old"'s status still lists .143
    // on b beside its own .144. Only what a spec still requests is a placement: both agree, no finding.
    ovn(n + "-new", "198.51.100.143", placed(a, "198.51.100.143"));
    ovn(n + "-old", "198.51.100.144", placed(a, "198.51.100.144"), placed(b, "198.51.100.143"));
    attach(ec2, a, "198.51.100.143", "198.51.100.144");
    // Not placed yet (no status): OVN has not chosen a node, so no node is expected to hold it.
    ovn(n + "-pending", "198.51.100.145");
    attach(ec2, b, "198.51.100.145");

    IpamRun run = audit(kubeconfig, moto, op);
    assertThat(run.exit()).as(run.err()).isEqualTo(1);
    JsonNode report = JSON.readTree(run.out());
    assertThat(report.path("cloud").asText()).startsWith("AWS: read ")
        .containsPattern("placements \\(\\d+ from HostSubnets, [1-9]\\d* from OVN EgressIPs\\)");
    // Every address checked, each failure listed: the cases are independent of each other.
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(kinds(report, "198.51.100.140")).as(message(report, "198.51.100.140")).isEmpty();
    soft.assertThat(kinds(report, "198.51.100.141")).containsExactly("DRIFT");
    soft.assertThat(message(report, "198.51.100.141"))
        .contains("is routed through " + a + " (EgressIP egressipam-" + n + "-moved status.items)")
        .contains("is on ENI " + enis.get(b) + " of node " + b);
    soft.assertThat(kinds(report, "198.51.100.142")).containsExactly("DUPLICATE", "DRIFT");
    soft.assertThat(message(report, "198.51.100.142")).contains("is attached to the interfaces of 2 nodes")
        .contains("ENI " + enis.get(a)).contains("ENI " + enis.get(c))
        .contains("is on ENI " + enis.get(c) + " of node " + c + ", a node the cluster network does not route it");
    soft.assertThat(kinds(report, "198.51.100.143")).isEmpty();
    soft.assertThat(kinds(report, "198.51.100.144")).isEmpty();
    soft.assertThat(kinds(report, "198.51.100.145")).isEmpty();
    for (String node : List.of(a, b, c)) {
      soft.assertThat(kinds(report, node)).as(node).isEmpty();
    }
    soft.assertAll();
  }

  /** The same cluster, once the address is where OVN says, is clean. */
  @Test
  void whereOvnAndTheInterfacesAgreeThereIsNoFinding(KubeApiServer server, KubernetesClient client, Namespace ns,
      MotoServer moto, Ec2Client ec2, @TempDir Path dir) throws Exception {
    this.client = client;
    String op = ns.getMetadata().getName(); // the operator's namespace: the credentials Secret
    String n = shortName(ns);
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    String subnet = awsWorld(ec2, op);
    String a = n + "-p1";
    String b = n + "-p2";
    worker(ec2, a, subnet);
    worker(ec2, b, subnet);
    ovn(n + "-x", "198.51.100.146", placed(b, "198.51.100.146"));
    attach(ec2, b, "198.51.100.146");

    IpamRun run = audit(kubeconfig, moto, op);
    JsonNode report = JSON.readTree(run.out());
    assertThat(report.path("cloud").asText()).as(run.err()).startsWith("AWS: read ");
    for (String r : List.of("198.51.100.146", a, b)) {
      assertThat(kinds(report, r)).as(r + ": " + message(report, r)).isEmpty();
    }

    // OVN fails the address over to a; until it is moved on the cloud's side, that is drift.
    var egressIp = ThirdPartyCrd.EGRESS_IP.resources(client).withName("egressipam-" + n + "-x");
    egressIp.edit(e -> {
      e.getAdditionalProperties().put("status", Map.of("items", List.of(placed(a, "198.51.100.146"))));
      return e;
    });
    JsonNode after = JSON.readTree(audit(kubeconfig, moto, op).out());
    assertThat(kinds(after, "198.51.100.146")).containsExactly("DRIFT");
    assertThat(message(after, "198.51.100.146")).contains("is routed through " + a + " (EgressIP egressipam-" + n)
        .contains("is on ENI " + enis.get(b));
  }

  /** The operator's loop reads the same placements: drift is counted and an Event lands on the EgressIP. */
  @Test
  void theOperatorsLoopReportsOvnDriftWithAnEventOnTheEgressIp(KubernetesClient client, Namespace ns,
      MotoServer moto, Ec2Client ec2) {
    this.client = client;
    String op = ns.getMetadata().getName(); // the operator's namespace: the credentials Secret
    String n = shortName(ns);
    String subnet = awsWorld(ec2, op);
    String a = n + "-l1";
    String b = n + "-l2";
    worker(ec2, a, subnet);
    worker(ec2, b, subnet);
    ovn(n + "-loop", "198.51.100.150", placed(a, "198.51.100.150"));
    attach(ec2, b, "198.51.100.150");
    var registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    var settings = new org.ipamoperators.egressip.cloud.CloudSettings(Map.of("aws.region", "us-east-1",
        "aws.endpoint", moto.endpoint().toString()), op, null);
    try (var loop = new org.ipamoperators.cli.audit.AuditLoop(client, registry, java.util.Set.of("egressip"),
        Duration.ofHours(1), Duration.ofMinutes(5), () -> true, java.time.Clock.systemUTC(), settings, "AWS")) {
      var report = loop.runOnce();
      assertThat(report.findings()).anySatisfy(f -> {
        assertThat(f.resource().value()).isEqualTo("198.51.100.150");
        assertThat(f.kind()).isEqualTo(FindingKind.DRIFT);
        assertThat(f.parties()).contains(a, b);
      });
      assertThat(registry.get("ipam_audit_findings").tag("kind", "drift").gauge().value()).isGreaterThanOrEqualTo(1);
      String name = "egressipam-" + n + "-loop";
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
          assertThat(client.v1().events().inAnyNamespace().list().getItems()).anySatisfy(e -> {
            assertThat(e.getInvolvedObject().getKind()).isEqualTo("EgressIP");
            assertThat(e.getInvolvedObject().getName()).isEqualTo(name);
            assertThat(e.getReason()).isEqualTo("ClaimedByAnother");
            assertThat(e.getMessage()).contains("198.51.100.150");
          }));
    }
  }

  /** A cluster without OVN's kind (OpenShift SDN, or no egress network): no error, no OVN placement. */
  @Test
  void withoutTheEgressIpKindNothingIsPlacedAndNothingFails(KubeApiServer server, KubernetesClient client,
      Namespace ns, MotoServer moto, Ec2Client ec2, @TempDir Path dir) throws Exception {
    this.client = client;
    String op = ns.getMetadata().getName(); // the operator's namespace: the credentials Secret
    String n = shortName(ns);
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    String subnet = awsWorld(ec2, op);
    String a = n + "-s1";
    worker(ec2, a, subnet);
    AuditFixtures.egress(client, n + "-sdn", "198.51.100.151");
    namespaces.add(n + "-sdn");
    attach(ec2, a, "198.51.100.151");
    try (KubernetesClient admin = server.newClient()) {
      admin.apiextensions().v1().customResourceDefinitions().withName(ThirdPartyCrd.EGRESS_IP.crdName()).delete();
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> admin.getApiGroups().getGroups()
          .stream().noneMatch(g -> g.getName().equals(ThirdPartyCrd.EGRESS_IP.group())));
      try {
        IpamRun run = audit(kubeconfig, moto, op);
        JsonNode report = JSON.readTree(run.out());
        assertThat(report.path("cloud").asText()).as(run.err()).startsWith("AWS: read ");
        assertThat(kinds(report, "198.51.100.151")).as(message(report, "198.51.100.151")).isEmpty();
        assertThat(kinds(report, a)).isEmpty();
      } finally {
        ThirdPartyCrd.install(admin, ThirdPartyCrd.EGRESS_IP); // for the tests after this one
      }
    }
  }

  /** A prefix for this test's namespaces and nodes, short enough for a name of 63 characters with a suffix. */
  private static String shortName(Namespace ns) {
    return "ovn-audit-" + Integer.toHexString(ns.getMetadata().getName().hashCode() & 0xffffff);
  }

  private IpamRun audit(Path kubeconfig, MotoServer moto, String n) {
    return IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "--leak-grace", "1h", "-o", "json", "--cloud",
        "--platform", "AWS", "--aws-region", "us-east-1", "--aws-endpoint", moto.endpoint().toString(),
        "--operator-namespace", n);
  }

  /** A namespace showing {@code ip}, its claim, and the EgressIP the egress controller writes for it. */
  @SafeVarargs
  private void ovn(String namespace, String ip, Map<String, String>... statusItems) {
    AuditFixtures.egress(client, namespace, ip);
    namespaces.add(namespace);
    AuditFixtures.ovnEgressIp(client, namespace, "ovn-audit", List.of(ip),
        statusItems.length == 0 ? null : List.of(statusItems));
  }

  private void worker(Ec2Client ec2, String node, String subnet) {
    enis.put(node, AuditFixtures.awsWorker(client, ec2, node, subnet));
    nodes.add(node);
  }

  /** Assigns the addresses to the node's ENI and lists them in its ownership tags, as the egress operator does. */
  private void attach(Ec2Client ec2, String node, String... ips) {
    AuditFixtures.attach(ec2, enis.get(node), true, ips);
  }

  private String awsWorld(Ec2Client ec2, String n) {
    return AuditFixtures.awsWorld(client, ec2, n, "198.51.100.128/26");
  }
}
