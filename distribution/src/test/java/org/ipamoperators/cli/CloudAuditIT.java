package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.ipamoperators.cli.AuditFixtures.kinds;
import static org.ipamoperators.cli.AuditFixtures.message;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
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
 * {@code ipam audit --cloud} against moto's EC2 and a real API server: nodes with instances, egress addresses
 * attached to their device-index-0 ENIs and listed in the ownership tags (as the egress operator leaves them),
 * HostSubnets routing them, and one node whose instance does not exist. Each cloud finding is made on real
 * objects once, beside a healthy address. The API server is shared with other test classes, so only this test's
 * addresses (198.51.100.192/26, used by no other test here) and nodes are looked at; addresses are data only.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.HOST_SUBNET})
@MotoTest
class CloudAuditIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private KubernetesClient client;
  private final List<String> nodes = new ArrayList<>();
  private final List<String> namespaces = new ArrayList<>();
  private final Map<String, String> enis = new HashMap<>();

  @AfterEach
  void cleanUp() {
    nodes.forEach(n -> {
      client.nodes().withName(n).delete();
      client.resources(HostSubnet.class).withName(n).delete();
    });
    namespaces.forEach(n -> client.namespaces().withName(n).delete());
    client.resources(IPClaim.class).list().getItems().stream()
        .filter(c -> c.getSpec() != null && c.getSpec().address().startsWith("198.51.100.2"))
        .forEach(c -> client.resource(c).delete());
  }

  @Test
  void eachCloudFinding(KubeApiServer server,
      KubernetesClient client, Namespace ns, MotoServer moto, Ec2Client ec2, @TempDir Path dir) throws Exception {
    this.client = client;
    String n = ns.getMetadata().getName();
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    String subnet = awsWorld(ec2, n);
    String a = n + "-a1";
    String b = n + "-a2";
    String c = n + "-a3";
    String lost = n + "-lost";
    for (String node : List.of(a, b, c)) {
      worker(ec2, node, subnet);
    }
    node(lost, "aws:///us-east-1a/i-0000000000000dead"); // an instance EC2 does not have

    // Healthy: claimed, annotated, routed through a, on a's ENI and in its tags.
    egress(n + "-ok", "198.51.100.210");
    hostSubnet(a, "198.51.100.210", "198.51.100.213", "198.51.100.214", "198.51.100.217");
    attach(ec2, a, true, "198.51.100.210");
    // Orphan: on b's ENI, in its tags, claimed by nobody.
    attach(ec2, b, true, "198.51.100.211");
    // Another tool's address on b's ENI, not in the tags: none of the audit's business.
    attach(ec2, b, false, "198.51.100.212");
    // Drift: routed through a, attached to b.
    egress(n + "-moved", "198.51.100.213");
    attach(ec2, b, true, "198.51.100.213");
    // Drift: routed through a, on no interface.
    egress(n + "-missing", "198.51.100.214");
    // Routed through the node that cannot be read: neither confirmed nor called missing.
    egress(n + "-unknown", "198.51.100.215");
    hostSubnet(lost, "198.51.100.215");
    // A leak whose owner is gone but that is still attached: reported, never proposed for release.
    client.resource(IPClaim.of(ClaimNames.of(Ip.parse("198.51.100.216")), new IPClaimSpec("198.51.100.216", "test",
        new ClaimOwner("egressip", "Namespace", null, n + "-gone", null)), Map.of())).create();
    attach(ec2, c, true, "198.51.100.216");

    // Duplicate: routed through a, attached to a's ENI and c's (moto, unlike EC2, lets one address be on two ENIs;
    // a stale tag list after a move gone wrong reads the same way).
    egress(n + "-twice", "198.51.100.217");
    attach(ec2, a, true, "198.51.100.217");
    attach(ec2, c, true, "198.51.100.217");

    List<String> cloudArgs = List.of("audit", "--kubeconfig", kubeconfig.toString(), "--leak-grace", "1ms", "-o",
        "json", "--cloud", "--platform", "AWS", "--aws-region", "us-east-1", "--aws-endpoint",
        moto.endpoint().toString(), "--operator-namespace", n);
    IpamRun run = IpamRun.of(cloudArgs.toArray(String[]::new));
    assertThat(run.exit()).as(run.err()).isEqualTo(1);
    JsonNode report = JSON.readTree(run.out());
    assertThat(report.path("cloud").asText()).startsWith("AWS: read ");
    assertThat(kinds(report, "198.51.100.210")).isEmpty();
    assertThat(kinds(report, "198.51.100.211")).containsExactly("ORPHAN");
    assertThat(message(report, "198.51.100.211")).contains("ENI " + enis.get(b) + " of node " + b)
        .contains("claimed by nobody").contains("the audit only reports it");
    assertThat(kinds(report, "198.51.100.212")).isEmpty();
    assertThat(kinds(report, "198.51.100.213")).containsExactly("DRIFT");
    assertThat(message(report, "198.51.100.213")).contains("is routed through " + a + " (HostSubnet " + a)
        .contains("is on ENI " + enis.get(b));
    assertThat(kinds(report, "198.51.100.214")).containsExactly("DRIFT");
    assertThat(message(report, "198.51.100.214")).contains("is routed through " + a)
        .contains("it is on no interface that could be read");
    assertThat(kinds(report, "198.51.100.215")).isEmpty();
    assertThat(kinds(report, lost)).containsExactly("UNKNOWN");
    assertThat(message(report, lost)).contains("i-0000000000000dead");
    for (String readable : List.of(a, b, c)) {
      assertThat(kinds(report, readable)).as(readable).isEmpty();
    }
    assertThat(kinds(report, "198.51.100.216")).containsExactly("LEAK");
    assertThat(kinds(report, "198.51.100.217")).containsExactly("DUPLICATE", "DRIFT");
    assertThat(message(report, "198.51.100.217")).contains("is attached to the interfaces of 2 nodes")
        .contains("ENI " + enis.get(a)).contains("ENI " + enis.get(c));
    assertThat(report.path("safeRepairs").toString()).doesNotContain(ClaimNames.of(Ip.parse("198.51.100.216")));

    // Without --cloud the audit reads the cluster only, as before: no cloud finding at all.
    IpamRun clusterOnly = IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "--leak-grace", "1ms", "-o", "json");
    JsonNode plain = JSON.readTree(clusterOnly.out());
    assertThat(plain.has("cloud")).isFalse();
    assertThat(kinds(plain, "198.51.100.211")).isEmpty();
    assertThat(kinds(plain, "198.51.100.213")).isEmpty();
    assertThat(kinds(plain, lost)).isEmpty();
    assertThat(plain.path("safeRepairs").toString()).contains(ClaimNames.of(Ip.parse("198.51.100.216")));
  }

  /** The same cluster, once the problems are gone, is clean on the cloud's side. */
  @Test
  void aCleanWorldIsClean(KubeApiServer server, KubernetesClient client, Namespace ns, MotoServer moto, Ec2Client ec2,
      @TempDir Path dir) throws Exception {
    this.client = client;
    String n = ns.getMetadata().getName();
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    String subnet = awsWorld(ec2, n);
    String a = n + "-c1";
    String b = n + "-c2";
    worker(ec2, a, subnet);
    worker(ec2, b, subnet);
    egress(n + "-x", "198.51.100.220");
    egress(n + "-y", "198.51.100.221");
    hostSubnet(a, "198.51.100.220");
    hostSubnet(b, "198.51.100.221");
    attach(ec2, a, true, "198.51.100.220");
    attach(ec2, b, true, "198.51.100.221");
    attach(ec2, b, false, "198.51.100.222"); // another tool's

    IpamRun run = IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "-o", "json", "--cloud", "--platform",
        "AWS", "--aws-region", "us-east-1", "--aws-endpoint", moto.endpoint().toString(), "--operator-namespace", n);
    JsonNode report = JSON.readTree(run.out());
    for (String r : List.of("198.51.100.220", "198.51.100.221", "198.51.100.222", a, b)) {
      assertThat(kinds(report, r)).as(r).isEmpty();
    }
    assertThat(report.path("cloud").asText()).contains("addresses attached by the egress operator");
  }

  /** The operator's loop reads the cloud too when it runs egressip: metrics and Events on the Nodes at fault. */
  @Test
  void theOperatorsLoopReportsCloudFindingsWithMetricsAndEvents(KubernetesClient client, Namespace ns,
      MotoServer moto, Ec2Client ec2) {
    this.client = client;
    String n = ns.getMetadata().getName();
    String subnet = awsWorld(ec2, n);
    String a = n + "-l1";
    String lost = n + "-l2";
    worker(ec2, a, subnet);
    node(lost, "aws:///us-east-1a/i-0000000000000beef");
    attach(ec2, a, true, "198.51.100.230"); // claimed by nobody
    var registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    var settings = new org.ipamoperators.egressip.cloud.CloudSettings(Map.of("aws.region", "us-east-1",
        "aws.endpoint", moto.endpoint().toString()), n, null);
    try (var loop = new org.ipamoperators.cli.audit.AuditLoop(client, registry, java.util.Set.of("egressip"),
        java.time.Duration.ofHours(1), java.time.Duration.ofMinutes(5), () -> true, java.time.Clock.systemUTC(),
        settings, "AWS")) {
      var report = loop.runOnce();
      assertThat(report.findings()).anySatisfy(f -> {
        assertThat(f.resource().value()).isEqualTo("198.51.100.230");
        assertThat(f.kind()).isEqualTo(org.ipamoperators.core.audit.FindingKind.ORPHAN);
      });
      assertThat(report.findings()).anySatisfy(f -> {
        assertThat(f.resource().value()).isEqualTo(lost);
        assertThat(f.kind()).isEqualTo(org.ipamoperators.core.audit.FindingKind.UNKNOWN);
      });
      assertThat(registry.get("ipam_audit_findings").tag("kind", "unknown").gauge().value()).isGreaterThanOrEqualTo(1);
      assertThat(registry.get("ipam_audit_findings").tag("kind", "orphan").gauge().value()).isGreaterThanOrEqualTo(1);
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() -> {
        var events = client.v1().events().inNamespace("default").list().getItems();
        assertThat(events).anySatisfy(e -> {
          assertThat(e.getInvolvedObject().getName()).isEqualTo(a);
          assertThat(e.getReason()).isEqualTo("PublishedWithoutClaim");
        });
        assertThat(events).anySatisfy(e -> {
          assertThat(e.getInvolvedObject().getName()).isEqualTo(lost);
          assertThat(e.getReason()).isEqualTo("CloudInterfaceUnreadable");
        });
      });
    }
  }

  private void worker(Ec2Client ec2, String node, String subnet) {
    enis.put(node, AuditFixtures.awsWorker(client, ec2, node, subnet));
    nodes.add(node);
  }

  private void node(String name, String providerId) {
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
        .withProviderID(providerId).endSpec().build()).create();
    nodes.add(name);
  }

  private void attach(Ec2Client ec2, String node, boolean ours, String... ips) {
    AuditFixtures.attach(ec2, enis.get(node), ours, ips);
  }

  private void egress(String namespace, String ip) {
    AuditFixtures.egress(client, namespace, ip);
    namespaces.add(namespace);
  }

  private void hostSubnet(String node, String... ips) {
    AuditFixtures.hostSubnet(client, node, ips);
  }

  private String awsWorld(Ec2Client ec2, String n) {
    return AuditFixtures.awsWorld(client, ec2, n, "198.51.100.192/26");
  }
}
