package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.azure.core.credential.AccessToken;
import com.azure.core.http.jdk.httpclient.JdkHttpClientBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.ipamoperators.cli.audit.CloudFacts;
import org.ipamoperators.cloud.azure.AzureContext;
import org.ipamoperators.cloud.azure.AzureNodeNetwork;
import org.ipamoperators.cloud.azure.AzureNodeNetworkProvider;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.audit.AuditOptions;
import org.ipamoperators.core.audit.AuditReport;
import org.ipamoperators.core.audit.Attachment;
import org.ipamoperators.core.audit.FindingKind;
import org.ipamoperators.core.audit.LedgerAudit;
import org.ipamoperators.egressip.cloud.CloudNodeNetworks;
import org.ipamoperators.egressip.cloud.CloudSettings;
import org.ipamoperators.egressip.network.Platform;
import org.ipamoperators.testsupport.arm.ArmServer;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The audit's cloud side on Azure, through the egress controller's own NodeNetwork (its {@code describe} reports
 * the ip configurations the operator named as its own, {@code ipam-egress-<address>}), against the ARM test server
 * and a real API server: an orphan on a NIC, another tool's ip configuration left alone, an address routed through
 * one node but on another's NIC, a node whose VM does not exist. The network is built as the operator builds it
 * except for the ARM server's certificate and a test token (nothing leaves 127.0.0.1); the findings come from the
 * same pure audit {@code ipam audit --cloud} runs. Addresses are data only (203.0.113.0/24).
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.HOST_SUBNET})
class CloudAuditAzureIT {
  private static final String SUB = "00000000-0000-0000-0000-0000000000a1";
  private KubernetesClient client;
  private ArmServer arm;
  private final List<String> nodes = new ArrayList<>();
  private final List<String> namespaces = new ArrayList<>();

  @AfterEach
  void cleanUp() {
    nodes.forEach(n -> {
      client.nodes().withName(n).delete();
      client.resources(HostSubnet.class).withName(n).delete();
    });
    namespaces.forEach(n -> client.namespaces().withName(n).delete());
    client.resources(IPClaim.class).list().getItems().stream()
        .filter(c -> c.getSpec() != null && c.getSpec().address().startsWith("203.0.113."))
        .forEach(c -> client.resource(c).delete());
    if (arm != null) {
      arm.close();
    }
  }

  @Test
  void findings(KubernetesClient client, Namespace ns) {
    this.client = client;
    String n = ns.getMetadata().getName();
    client.secrets().inNamespace(n).resource(new SecretBuilder().withNewMetadata()
        .withName(AzureNodeNetworkProvider.CREDENTIALS_SECRET).endMetadata()
        .addToStringData("azure_subscription_id", SUB).addToStringData("azure_tenant_id", "t")
        .addToStringData("azure_client_id", "c").addToStringData("azure_client_secret", "s").build()).create();
    arm = new ArmServer(SUB, "eastus");
    String vnet = arm.vnet("net-rg", "vnet1", "203.0.113.0/24");
    String subnet = arm.subnet(vnet, "workers", "203.0.113.0/24");
    String a = n + "-z1";
    String b = n + "-z2";
    String lost = n + "-lost";
    String nicA = worker(a, subnet);
    worker(b, subnet);
    node(lost, "azure:///subscriptions/" + SUB + "/resourceGroups/cluster-rg/providers/Microsoft.Compute"
        + "/virtualMachines/no-such-vm", null);

    // Healthy: claimed, annotated, routed through a, on a's NIC under our name.
    egress(n + "-ok", "203.0.113.20");
    arm.seedIpConfiguration(nicA, "ipam-egress-203.0.113.20", "203.0.113.20", subnet, null);
    // Orphan: on a's NIC under our name, claimed by nobody.
    arm.seedIpConfiguration(nicA, "ipam-egress-203.0.113.21", "203.0.113.21", subnet, null);
    // Another tool's ip configuration: none of the audit's business.
    arm.seedIpConfiguration(nicA, "other-1", "203.0.113.22", subnet, null);
    // Drift: routed through b, on a's NIC.
    egress(n + "-moved", "203.0.113.23");
    arm.seedIpConfiguration(nicA, "ipam-egress-203.0.113.23", "203.0.113.23", subnet, null);
    hostSubnet(a, "203.0.113.20");
    hostSubnet(b, "203.0.113.23");

    AzureNodeNetworkProvider provider = new AzureNodeNetworkProvider(s -> AzureNodeNetwork.create(
        s.withRetries(2, Duration.ofMillis(50), Duration.ofMillis(200)),
        r -> Mono.just(new AccessToken("it-token", OffsetDateTime.now().plusHours(1))),
        new JdkHttpClientBuilder(java.net.http.HttpClient.newBuilder().sslContext(arm.clientSslContext())).build(),
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
    CloudSettings settings = new CloudSettings(Map.of(AzureContext.SETTING_ENDPOINT, arm.endpoint().toString()), n,
        null);
    Platform azure = new Platform("Azure", true, null, Map.of("resourceGroupName", "cluster-rg",
        "networkResourceGroupName", "net-rg", "cloudName", "AzurePublicCloud"));
    CloudFacts cloud;
    try (CloudNodeNetworks networks = new CloudNodeNetworks(List.of(provider), settings,
        CloudNodeNetworks.clusterSecrets(client, settings))) {
      cloud = CloudFacts.read(client, networks, azure);
    }
    assertThat(cloud.note()).startsWith("Azure: read ");
    assertThat(cloud.view().attachments().stream().filter(x -> x.node().equals(a)).map(x -> x.resource().value()))
        .as("what a's NIC holds under our name only").containsExactlyInAnyOrder("203.0.113.20", "203.0.113.21",
            "203.0.113.23");
    assertThat(cloud.view().attachments()).filteredOn(x -> x.node().equals(b)).isEmpty();
    assertThat(cloud.view().described()).contains(a, b).doesNotContain(lost);
    assertThat(cloud.view().unknown()).containsKey(lost);
    Attachment orphan = cloud.view().attachments().stream()
        .filter(x -> x.resource().value().equals("203.0.113.21")).findFirst().orElseThrow();
    assertThat(cloud.node(orphan).getMetadata().getName()).isEqualTo(a);

    ClusterFacts facts = ClusterFacts.read(client);
    AuditReport report = LedgerAudit.audit(facts.entries(), facts.publications(), cloud.view(), List.of(),
        new AuditOptions(Instant.now(), Duration.ofHours(1)));
    assertThat(kinds(report, "203.0.113.20")).isEmpty();
    assertThat(kinds(report, "203.0.113.21")).containsExactly(FindingKind.ORPHAN);
    assertThat(kinds(report, "203.0.113.22")).isEmpty();
    assertThat(kinds(report, "203.0.113.23")).containsExactly(FindingKind.DRIFT);
    assertThat(kinds(report, lost)).containsExactly(FindingKind.UNKNOWN);
    assertThat(kinds(report, a)).isEmpty();
    assertThat(kinds(report, b)).isEmpty();
  }

  /** A VM with its NIC in the subnet, and its Node; returns the NIC's id. */
  private String worker(String name, String subnet) {
    String vm = arm.vm("cluster-rg", name, subnet, null, List.of());
    String nic = arm.primaryNicId(vm);
    String primary = arm.ipConfigurations(nic).get(0).path("properties").path("privateIPAddress").asText();
    node(name, "azure://" + vm, primary);
    return nic;
  }

  private void node(String name, String providerId, String internalIp) {
    var node = new NodeBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
        .withProviderID(providerId).endSpec();
    if (internalIp != null) {
      node = node.withNewStatus().addNewAddress().withType("InternalIP").withAddress(internalIp).endAddress()
          .endStatus();
    }
    client.nodes().resource(node.build()).create();
    nodes.add(name);
  }



  private static List<FindingKind> kinds(AuditReport report, String resource) {
    return report.findings().stream().filter(f -> f.resource().value().equals(resource))
        .map(org.ipamoperators.core.audit.Finding::kind).toList();
  }

  private void egress(String namespace, String ip) {
    AuditFixtures.egress(client, namespace, ip);
    namespaces.add(namespace);
  }

  private void hostSubnet(String node, String... ips) {
    AuditFixtures.hostSubnet(client, node, ips);
  }
}
