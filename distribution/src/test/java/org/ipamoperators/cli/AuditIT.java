package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.ipamoperators.cli.AuditFixtures.kinds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.BlockLedger;
import org.ipamoperators.controller.common.ledger.BlockNames;
import org.ipamoperators.controller.common.ledger.BlockRequest;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPBlockEntry;
import org.ipamoperators.controller.common.ledger.IPBlockSpec;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ipam audit} on a real API server (its addresses are data only, from 198.18.14.0/24, which no other test uses,
 * because the audit reads the whole shared apiserver), with a cluster state made by hand to hold each kind of
 * problem once beside a healthy assignment: the report names each, exits 1, and {@code --repair}
 * releases only the claim of an owner that is gone.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.NET_NAMESPACE})
class AuditIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void reportsEachKindOfProblemAndRepairsOnlyAGoneOwnersClaim(KubeApiServer server, KubernetesClient client,
      Namespace ns, @TempDir Path dir) throws Exception {
    String n = ns.getMetadata().getName();
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    // Healthy: web holds 198.18.14.10, claimed and shown by web only.
    claim("198.18.14.10", new ClaimOwner("vip", "Service", n, "web", null), client);
    publish(client, service(client, n, "web"), "198.18.14.10");
    // Duplicate: 198.18.14.11 is claimed by a and shown by a and b.
    claim("198.18.14.11", new ClaimOwner("vip", "Service", n, "a", null), client);
    publish(client, service(client, n, "a"), "198.18.14.11");
    publish(client, service(client, n, "b"), "198.18.14.11");
    // Orphan: a namespace shows an egress IP nobody claimed.
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(n + "-pay")
        .addToAnnotations(EgressAnnotations.EGRESSIPS, "198.18.14.20").endMetadata().build()).create();
    // The NetNamespace agrees with the annotation: one holder, not a duplicate.
    client.genericKubernetesResources("network.openshift.io/v1", "NetNamespace").resource(
        new GenericKubernetesResourceBuilder().withApiVersion("network.openshift.io/v1").withKind("NetNamespace")
            .withNewMetadata().withName(n + "-pay").endMetadata()
            .addToAdditionalProperties("netname", n + "-pay").addToAdditionalProperties("netid", 7)
            .addToAdditionalProperties("egressIPs", List.of("198.18.14.20")).build()).create();
    // Leaks: one owner gone (safe to release), one alive (only reported).
    claim("198.18.14.30", new ClaimOwner("egressip", "Namespace", null, n + "-gone", null), client);
    claim("198.18.14.31", new ClaimOwner("egressip", "Namespace", null, n, null), client);

    IpamRun first = IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "--leak-grace", "1ms", "-o", "json");
    assertThat(first.exit()).as(first.err()).isEqualTo(1);
    // The API server is shared with other test classes: only this test's addresses are looked at.
    JsonNode report = JSON.readTree(first.out());
    assertThat(first.err()).as("no progress unless asked (stderr is no terminal here)").isEmpty();
    IpamRun told = IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "--leak-grace", "1ms", "-o", "json",
        "--progress");
    assertThat(told.err()).containsPattern("(?m)^ipam audit: \\d+ Namespaces \\(\\d+\\.\\d s\\)$")
        .containsPattern("(?m)^ipam audit: \\d+ IPClaims? \\(").containsPattern("(?m)^ipam audit: \\d+ Services? \\(")
        .containsPattern("(?m)^ipam audit: \\d+ findings? \\(");
    assertThat(JSON.readTree(told.out()).path("kind").asText()).as("stdout keeps the report alone").isEqualTo("AuditReport");
    assertThat(report.path("kind").asText()).isEqualTo("AuditReport");
    assertThat(report.path("schemaVersion").asText()).isEqualTo(JsonOutput.SCHEMA_VERSION);
    assertThat(kinds(report, "198.18.14.10")).isEmpty();
    assertThat(kinds(report, "198.18.14.11")).containsExactly("DUPLICATE", "DRIFT");
    assertThat(kinds(report, "198.18.14.20")).containsExactly("ORPHAN");
    assertThat(kinds(report, "198.18.14.30")).containsExactly("LEAK");
    assertThat(kinds(report, "198.18.14.31")).containsExactly("LEAK");
    assertThat(report.path("findings").toString())
        .contains("198.18.14.11 is published by 2 holders")
        .contains("no ledger claims it");
    List<String> safe = new java.util.ArrayList<>();
    report.path("safeRepairs").forEach(r -> safe.add(r.path("claim").asText()));
    assertThat(safe).contains("IPClaim " + name("198.18.14.30")).doesNotContain("IPClaim " + name("198.18.14.31"));
    assertThat(client.resources(IPClaim.class).withName(name("198.18.14.30")).get()).as("no repair without --repair").isNotNull();

    IpamRun repaired = IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "--leak-grace", "1ms", "--repair");
    assertThat(repaired.out()).contains("repaired: IPClaim " + name("198.18.14.30") + " released");
    assertThat(client.resources(IPClaim.class).withName(name("198.18.14.30")).get()).isNull();
    for (String kept : List.of("198.18.14.10", "198.18.14.11", "198.18.14.31")) {
      assertThat(client.resources(IPClaim.class).withName(name(kept)).get()).as(kept).isNotNull();
    }

    IpamRun after = IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "--leak-grace", "1ms", "-o", "json");
    JsonNode again = JSON.readTree(after.out());
    assertThat(kinds(again, "198.18.14.30")).isEmpty();
    assertThat(kinds(again, "198.18.14.31")).containsExactly("LEAK");
    assertThat(again.path("safeRepairs").toString()).doesNotContain(name("198.18.14.31"));

    // The default grace: claims made a moment ago are work in progress, not leaks.
    IpamRun young = IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "-o", "json");
    assertThat(kinds(JSON.readTree(young.out()), "198.18.14.31")).isEmpty();
  }

  /**
   * Block entries are claims too: an address in an IPBlock entry and an IPClaim at once (what a
   * process killed between its write and its check may leave) is claimed twice; a gone owner's
   * entry is repaired by removing that entry only, with the block's resourceVersion as precondition.
   */
  @Test
  void blockEntriesAreAuditedAndAGoneOwnersEntryIsRemovedFromItsBlock(KubeApiServer server, KubernetesClient client,
      Namespace ns, @TempDir Path dir) throws Exception {
    String n = ns.getMetadata().getName();
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    ClaimOwner alive = new ClaimOwner("egressip", "Namespace", null, n, null);
    ClaimOwner gone = new ClaimOwner("egressip", "Namespace", null, n + "-gone", null);
    String twice = "198.18.14.65";
    new BlockLedger(client).claimAll(List.of(
        new BlockRequest(Ip.parse("198.18.14.64"), "egressipam/audit", alive, "allocated"),
        new BlockRequest(Ip.parse("198.18.14.66"), "egressipam/audit", gone, "allocated")));
    // The crash window: an entry and an IPClaim for one address (written by hand, as no live
    // claimer leaves both).
    IPBlock block = client.resources(IPBlock.class).withName(BlockNames.of(Ip.parse(twice))).get();
    Map<String, IPBlockEntry> entries = new java.util.TreeMap<>(block.entries());
    entries.put(twice, new IPBlockEntry("egressipam/audit", alive, "allocated", null));
    block.setSpec(new IPBlockSpec(block.getSpec().cidr(), entries));
    client.resource(block).update();
    claim(twice, new ClaimOwner("vip", "Service", n, "web", null), client);
    client.namespaces().withName(n).edit(x -> {
      if (x.getMetadata().getAnnotations() == null) {
        x.getMetadata().setAnnotations(new java.util.HashMap<>());
      }
      x.getMetadata().getAnnotations().put(EgressAnnotations.EGRESSIPS, "198.18.14.64");
      return x;
    });

    JsonNode report = JSON.readTree(IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "--leak-grace", "1ms",
        "-o", "json").out());
    assertThat(kinds(report, "198.18.14.64")).isEmpty();
    assertThat(kinds(report, twice)).contains("DOUBLE_CLAIM");
    assertThat(kinds(report, "198.18.14.66")).containsExactly("LEAK");
    String entry = "IPBlock 198.18.14.64-26 entry 198.18.14.66";
    List<String> safe = new java.util.ArrayList<>();
    report.path("safeRepairs").forEach(r -> safe.add(r.path("claim").asText()));
    assertThat(safe).contains(entry).doesNotContain("IPBlock 198.18.14.64-26 entry 198.18.14.64");

    IpamRun repaired = IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "--leak-grace", "1ms", "--repair");
    assertThat(repaired.out()).contains("repaired: " + entry + " released");
    IPBlock after = client.resources(IPBlock.class).withName("198.18.14.64-26").get();
    assertThat(after.entries()).containsKeys("198.18.14.64", twice).doesNotContainKey("198.18.14.66");
  }

  @Test
  void anAgreeingClusterIsCleanAndExitsZero(KubeApiServer server, KubernetesClient client, Namespace ns,
      @TempDir Path dir) throws Exception {
    String n = ns.getMetadata().getName();
    claim("198.18.14.5", new ClaimOwner("vip", "Service", n, "only", null), client);
    publish(client, service(client, n, "only"), "198.18.14.5");
    IpamRun run = IpamRun.of("audit", "--kubeconfig", OperatorRun.writeKubeconfig(dir, server.kubeconfig()).toString(),
        "--leak-grace", "1ms", "-o", "json");
    assertThat(run.err()).isEmpty();
    JsonNode report = JSON.readTree(run.out());
    assertThat(report.path("claims").asInt()).isPositive();
    assertThat(kinds(report, "198.18.14.5")).isEmpty();
    // Taken away, the publication leaves a leak; the claim is the owner's, so nothing is repaired.
    Service only = client.services().inNamespace(n).withName("only").get();
    only.getStatus().getLoadBalancer().setIngress(List.of());
    client.services().inNamespace(n).resource(only).updateStatus();
    JsonNode later = JSON.readTree(IpamRun.of("audit", "--kubeconfig",
        OperatorRun.writeKubeconfig(dir, server.kubeconfig()).toString(), "--leak-grace", "1ms", "-o", "json").out());
    assertThat(kinds(later, "198.18.14.5")).containsExactly("LEAK");
  }

  @Test
  void aCleanReportSaysSo() {
    var clean = org.ipamoperators.core.audit.LedgerAudit.audit(List.of(), List.of(),
        org.ipamoperators.core.audit.AuditOptions.at(java.time.Instant.now()));
    assertThat(AuditCommand.text(clean, List.of(), List.of("EgressIP")))
        .startsWith("audited 0 claims against 0 publications (not served here: EgressIP)")
        .contains("clean: every claim is shown by its owner");
  }

  @Test
  void theOperatorsLoopExportsFindingsRecordsEventsOnTheObjectsAtFaultAndRepairs(KubernetesClient client,
      Namespace ns) {
    String n = ns.getMetadata().getName();
    claim("198.18.14.40", new ClaimOwner("vip", "Service", n, "first", null), client);
    publish(client, service(client, n, "first"), "198.18.14.40");
    publish(client, service(client, n, "second"), "198.18.14.40");
    claim("198.18.14.41", new ClaimOwner("vip", "Service", n, "deleted-long-ago", null), client);
    var registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    var loop = new org.ipamoperators.cli.audit.AuditLoop(client, registry, java.util.Set.of("vip"),
        java.time.Duration.ofHours(1), java.time.Duration.ofMillis(1), () -> true, java.time.Clock.systemUTC());
    var report = loop.runOnce();
    assertThat(report.findings()).anySatisfy(f -> assertThat(f.resource().value()).isEqualTo("198.18.14.40"));
    assertThat(registry.get("ipam_audit_findings").tag("kind", "duplicate").gauge().value()).isGreaterThanOrEqualTo(1);
    assertThat(registry.get("ipam_audit_repairs").counter().count()).isGreaterThanOrEqualTo(1);
    assertThat(client.resources(IPClaim.class).withName(name("198.18.14.41")).get()).isNull();
    assertThat(client.resources(IPClaim.class).withName(name("198.18.14.40")).get()).isNotNull();
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() -> {
      var events = client.v1().events().inNamespace(n).list().getItems();
      // The duplicate is told on both Services; the drift only on the one the ledger does not name.
      assertThat(events).anySatisfy(e -> {
        assertThat(e.getInvolvedObject().getName()).isEqualTo("second");
        assertThat(e.getReason()).isEqualTo("ClaimedByAnother");
      });
      assertThat(events).filteredOn(e -> "AddressPublishedTwice".equals(e.getReason()))
          .extracting(e -> e.getInvolvedObject().getName()).contains("first", "second");
      assertThat(events).noneSatisfy(e -> {
        assertThat(e.getInvolvedObject().getName()).isEqualTo("first");
        assertThat(e.getReason()).isEqualTo("ClaimedByAnother");
      });
    });
    loop.close();
  }

  @Test
  void anUnreachableClusterIsOneLineAndExitTwo(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("kubeconfig");
    java.nio.file.Files.writeString(bad, """
        apiVersion: v1
        kind: Config
        clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
        contexts: [{name: c, context: {cluster: c, user: u}}]
        users: [{name: u, user: {token: t}}]
        current-context: c
        """);
    IpamRun run = IpamRun.of("audit", "--kubeconfig", bad.toString());
    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.err().lines().toList()).singleElement().asString().startsWith("ipam audit: could not read the cluster");
  }


  private static String name(String ip) {
    return ClaimNames.of(Ip.parse(ip));
  }

  private static void claim(String ip, ClaimOwner owner, KubernetesClient client) {
    client.resource(IPClaim.of(name(ip), new IPClaimSpec(ip, "test", owner), Map.of())).create();
  }

  private static Service service(KubernetesClient client, String ns, String name) {
    return client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName(name)
        .endMetadata().withNewSpec().withType("LoadBalancer").withLoadBalancerClass(VipAnnotations.LOAD_BALANCER_CLASS)
        .addNewPort().withPort(80).endPort().endSpec().build()).create();
  }

  private static void publish(KubernetesClient client, Service s, String ip) {
    s.setStatus(new io.fabric8.kubernetes.api.model.ServiceStatusBuilder().withNewLoadBalancer()
        .addNewIngress().withIp(ip).endIngress().endLoadBalancer().build());
    client.services().inNamespace(s.getMetadata().getNamespace()).resource(s).updateStatus();
  }
}
