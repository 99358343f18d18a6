package org.ipamoperators.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnetBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.cloud.aws.Ec2NodeNetwork;
import org.ipamoperators.cloud.aws.Ec2NodeNetworkProvider;
import org.ipamoperators.egressip.api.EgressAnnotations;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.Tag;

/** What the audit ITs read from an {@code ipam audit -o json} report, and the egress objects they make. */
final class AuditFixtures {
  private AuditFixtures() {}

  /** The kinds of the findings about one resource, in report order. */
  static List<String> kinds(JsonNode report, String resource) {
    List<String> out = new ArrayList<>();
    report.path("findings").forEach(f -> {
      if (resource.equals(f.path("resource").path("value").asText())) {
        out.add(f.path("kind").asText());
      }
    });
    return out;
  }

  /** The messages of the findings about one resource, one per line. */
  static String message(JsonNode report, String resource) {
    StringBuilder b = new StringBuilder();
    report.path("findings").forEach(f -> {
      if (resource.equals(f.path("resource").path("value").asText())) {
        b.append(f.path("message").asText()).append('\n');
      }
    });
    return b.toString();
  }

  /** A namespace showing the egress address, and its claim. */
  static void egress(KubernetesClient client, String namespace, String ip) {
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace)
        .addToAnnotations(EgressAnnotations.EGRESSIPS, ip).endMetadata().build()).create();
    client.resource(IPClaim.of(ClaimNames.of(Ip.parse(ip)), new IPClaimSpec(ip, "test",
        new ClaimOwner("egressip", "Namespace", null, namespace, null)), Map.of())).create();
  }

  /** The node's HostSubnet routing the addresses through it. */
  static void hostSubnet(KubernetesClient client, String node, String... ips) {
    client.resources(HostSubnet.class).resource(new HostSubnetBuilder().withNewMetadata().withName(node).endMetadata()
        .withHost(node).withHostIP("192.0.2.1").withSubnet("10.128.0.0/23").withEgressIPs(ips).build()).create();
  }

  /**
   * An OVN EgressIP as the egress controller writes it for a namespace ({@code egressipam-<namespace>}, labelled
   * with the IPAM), with the status OVN would write: each {@code statusItems} entry is {node, egressIP}. The test
   * plays ovnkube's part: the kind has no status subresource (as upstream), so the status is written with the object.
   */
  static void ovnEgressIp(KubernetesClient client, String namespace, String ipam, List<String> ips,
      List<Map<String, String>> statusItems) {
    io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder b =
        new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder().withApiVersion("k8s.ovn.org/v1")
            .withKind("EgressIP").withNewMetadata().withName("egressipam-" + namespace)
            .addToLabels(EgressAnnotations.MANAGED_BY, ipam).endMetadata()
            .addToAdditionalProperties("spec", Map.of("egressIPs", ips,
                "namespaceSelector", Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", namespace))));
    if (statusItems != null) {
      b.addToAdditionalProperties("status", Map.of("items", statusItems));
    }
    client.genericKubernetesResources(org.ipamoperators.testsupport.crds.ThirdPartyCrd.EGRESS_IP.context())
        .resource(b.build()).create();
  }

  /** One item of an EgressIP's status: OVN placed {@code ip} on {@code node}. */
  static Map<String, String> placed(String node, String ip) {
    return Map.of("node", node, "egressIP", ip);
  }

  /**
   * The credentials Secret in the operator's namespace {@code operatorNs}, and a VPC (198.51.100.0/24) with one
   * subnet ({@code subnetCidr}) for a test's addresses; returns the subnet's id.
   */
  static String awsWorld(KubernetesClient client, Ec2Client ec2, String operatorNs, String subnetCidr) {
    client.secrets().inNamespace(operatorNs).resource(new SecretBuilder().withNewMetadata()
        .withName(Ec2NodeNetworkProvider.CREDENTIALS_SECRET).endMetadata()
        .addToStringData("aws_access_key_id", "test").addToStringData("aws_secret_access_key", "test").build()).create();
    String vpc = ec2.createVpc(r -> r.cidrBlock("198.51.100.0/24")).vpc().vpcId();
    return ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock(subnetCidr).availabilityZone("us-east-1a"))
        .subnet().subnetId();
  }

  /** An EC2 instance in {@code subnet} and its Node (provider id set); returns its device-index-0 ENI. */
  static String awsWorker(KubernetesClient client, Ec2Client ec2, String node, String subnet) {
    Instance i = ec2.runInstances(r -> r.imageId("ami-12c6146b").instanceType("m5.large").subnetId(subnet)
        .minCount(1).maxCount(1)).instances().get(0);
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().withNewSpec()
        .withProviderID("aws:///" + i.placement().availabilityZone() + "/" + i.instanceId()).endSpec().build())
        .create();
    return i.networkInterfaces().stream().filter(x -> x.attachment().deviceIndex() == 0).findFirst()
        .orElseThrow().networkInterfaceId();
  }

  /**
   * Assigns the addresses to the ENI; {@code ours}: also lists them in its ownership tags, as the egress operator
   * does.
   */
  static void attach(Ec2Client ec2, String eni, boolean ours, String... ips) {
    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(eni).privateIpAddresses(ips));
    if (ours) {
      String before = ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(eni)).networkInterfaces().get(0)
          .tagSet().stream().filter(t -> t.key().equals(Ec2NodeNetwork.OWNED_TAGS_PREFIX + "0")).map(Tag::value)
          .findFirst().orElse("");
      String value = (before + " " + String.join(" ", ips)).trim();
      ec2.createTags(r -> r.resources(eni).tags(Tag.builder().key(Ec2NodeNetwork.OWNED_TAGS_PREFIX + "0")
          .value(value).build()));
    }
  }
}
