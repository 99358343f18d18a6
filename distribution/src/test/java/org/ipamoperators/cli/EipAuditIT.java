package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.ipamoperators.cli.AuditFixtures.kinds;
import static org.ipamoperators.cli.AuditFixtures.message;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.ipamoperators.cloud.aws.Ec2NodeNetworkProvider;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.eip.api.EipStatus;
import org.ipamoperators.eip.api.PodTarget;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.DomainType;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.Tag;

/**
 * {@code ipam audit --cloud --eip-cluster-name} against moto's EC2 and a real API server: Eips whose status agrees
 * with EC2, names an allocation EC2 does not have, shares one allocation with another Eip, or says an association
 * EC2 does not have, and an allocation tagged for an Eip that does not exist. Each on real objects, once.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml",
    "META-INF/fabric8/eips.materialize.cloud-v1.yml"})
@MotoTest
class EipAuditIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void eachElasticIpFinding(KubeApiServer server, KubernetesClient client, Namespace ns, MotoServer moto,
      Ec2Client ec2, @TempDir Path dir) throws Exception {
    String n = ns.getMetadata().getName();
    String cluster = "audit-" + Integer.toHexString(n.hashCode());
    Path kubeconfig = OperatorRun.writeKubeconfig(dir, server.kubeconfig());
    client.secrets().inNamespace(n).resource(new SecretBuilder().withNewMetadata()
        .withName(Ec2NodeNetworkProvider.CREDENTIALS_SECRET).endMetadata()
        .addToStringData("aws_access_key_id", "test").addToStringData("aws_secret_access_key", "test").build()).create();
    String vpc = ec2.createVpc(r -> r.cidrBlock("198.51.100.0/24")).vpc().vpcId();
    String subnet = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock("198.51.100.0/25")).subnet().subnetId();
    Instance i = ec2.runInstances(r -> r.imageId("ami-12c6146b").instanceType("m5.large").subnetId(subnet)
        .minCount(1).maxCount(1)).instances().get(0);
    String eni = i.networkInterfaces().get(0).networkInterfaceId();
    String privateIp = i.privateIpAddress();

    // Healthy: web's status names its tagged allocation and the association EC2 has.
    String web = allocate(ec2, cluster, n, "web");
    ec2.associateAddress(r -> r.allocationId(web).networkInterfaceId(eni).privateIpAddress(privateIp));
    String webIp = publicIp(ec2, web);
    client.resource(IPClaim.of(ClaimNames.of(Ip.parse(webIp)), new IPClaimSpec(webIp, "eip/" + cluster,
        new ClaimOwner("eip", "Eip", n, "web", null)), java.util.Map.of())).create();
    eip(client, n, "web", new EipStatus(web, webIp, eni, privateIp, null, null, null, null));
    // Drift: an allocation EC2 does not have.
    eip(client, n, "stale", new EipStatus("eipalloc-00000000deadbeef0", null, null, null, null, null, null, null));
    // Duplicate: two Eips show the allocation tagged for the first.
    String dup = allocate(ec2, cluster, n, "dup1");
    eip(client, n, "dup1", new EipStatus(dup, null, null, null, null, null, null, null));
    eip(client, n, "dup2", new EipStatus(dup, null, null, null, null, null, null, null));
    // Leak: tagged for an Eip that does not exist.
    String leak = allocate(ec2, cluster, n, "ghost");
    // Drift: the status says associated, EC2 has it on nothing.
    String assoc = allocate(ec2, cluster, n, "assoc");
    eip(client, n, "assoc", new EipStatus(assoc, null, eni, privateIp, null, null, null, null));

    IpamRun run = IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "-o", "json", "--cloud", "--platform",
        "AWS", "--aws-region", "us-east-1", "--aws-endpoint", moto.endpoint().toString(), "--operator-namespace", n,
        "--eip-cluster-name", cluster);
    assertThat(run.exit()).as(run.err()).isEqualTo(1);
    JsonNode report = JSON.readTree(run.out());
    assertThat(report.path("elasticIps").asText()).contains("cluster " + cluster);
    assertThat(kinds(report, web)).isEmpty();
    assertThat(kinds(report, webIp)).isEmpty();
    assertThat(kinds(report, "eipalloc-00000000deadbeef0")).containsExactly("DRIFT");
    assertThat(message(report, "eipalloc-00000000deadbeef0")).contains("EC2 does not have it");
    assertThat(kinds(report, dup)).containsExactly("DUPLICATE", "DRIFT");
    assertThat(message(report, dup)).contains("is shown by 2 Eips").contains("EC2 tags it for eip/Eip/" + n + "/dup1");
    assertThat(kinds(report, leak)).containsExactly("LEAK");
    assertThat(message(report, leak)).contains("tagged for eip/Eip/" + n + "/ghost").contains("that Eip is gone");
    assertThat(kinds(report, assoc)).containsExactly("DRIFT");
    assertThat(message(report, assoc)).contains("says it is associated with " + eni + " " + privateIp)
        .contains("EC2 has it associated with nothing");

    // The operator's loop, running eip with its settings, makes the same findings: metrics, Events on the Eips.
    var registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    var settings = org.ipamoperators.eip.EipSettings.from(java.util.Map.of(
        org.ipamoperators.eip.EipSettings.CLUSTER_NAME, cluster, org.ipamoperators.eip.EipSettings.AWS_REGION, "us-east-1"))
        .withAws(org.ipamoperators.cloud.aws.AwsSettings.of("us-east-1").withEndpoint(moto.endpoint())
            .withKeys(new org.ipamoperators.cloud.aws.AwsSettings.StaticKeys("test", "test")));
    try (var loop = new org.ipamoperators.cli.audit.AuditLoop(client, registry, java.util.Set.of("eip"),
        java.time.Duration.ofHours(1), java.time.Duration.ofMinutes(5), () -> true, java.time.Clock.systemUTC(),
        null, null).elasticIps(settings)) {
      var looped = loop.runOnce();
      assertThat(looped.findings()).anySatisfy(f -> {
        assertThat(f.resource().value()).isEqualTo(leak);
        assertThat(f.kind()).isEqualTo(org.ipamoperators.core.audit.FindingKind.LEAK);
      });
      assertThat(registry.get("ipam_audit_findings").tag("kind", "leak").gauge().value()).isGreaterThanOrEqualTo(1);
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() ->
          assertThat(client.v1().events().inNamespace(n).list().getItems()).anySatisfy(e -> {
            assertThat(e.getInvolvedObject().getName()).isEqualTo("stale");
            assertThat(e.getReason()).isEqualTo("ClaimedByAnother");
          }));
    }

    // Without the cluster name, the Elastic IPs are not read.
    JsonNode plain = JSON.readTree(IpamRun.of("audit", "--kubeconfig", kubeconfig.toString(), "-o", "json").out());
    assertThat(plain.has("elasticIps")).isFalse();
    assertThat(kinds(plain, leak)).isEmpty();
    client.resources(IPClaim.class).withName(ClaimNames.of(Ip.parse(webIp))).delete();
  }

  /** The apiserver is shared: an eip controller started by a later test class must not find these Eips. */
  @org.junit.jupiter.api.AfterEach
  void removeEips(KubernetesClient client, Namespace ns) {
    client.resources(Eip.class).inNamespace(ns.getMetadata().getName()).delete();
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() ->
        client.resources(Eip.class).inNamespace(ns.getMetadata().getName()).list().getItems().isEmpty());
  }

  private static String allocate(Ec2Client ec2, String cluster, String ns, String name) {
    String id = ec2.allocateAddress(r -> r.domain(DomainType.VPC)).allocationId();
    List<Tag> tags = new ArrayList<>(List.of(Tag.builder().key(EipNames.TAG_CLUSTER).value(cluster).build(),
        Tag.builder().key(EipNames.TAG_NAMESPACE).value(ns).build(),
        Tag.builder().key(EipNames.TAG_NAME).value(name).build(),
        Tag.builder().key(EipNames.TAG_UID).value("uid-" + name).build()));
    ec2.createTags(r -> r.resources(id).tags(tags));
    return id;
  }

  private static String publicIp(Ec2Client ec2, String alloc) {
    return ec2.describeAddresses(r -> r.allocationIds(alloc)).addresses().get(0).publicIp();
  }

  private static void eip(KubernetesClient client, String ns, String name, EipStatus status) {
    Eip e = new Eip();
    e.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).withNamespace(ns).build());
    e.setSpec(EipSpec.of(new EipSelector(new PodTarget(name), null)));
    Eip created = client.resources(Eip.class).inNamespace(ns).resource(e).create();
    created.setStatus(status);
    client.resources(Eip.class).inNamespace(ns).resource(created).updateStatus();
  }


}
