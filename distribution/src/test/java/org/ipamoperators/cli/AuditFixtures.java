package org.ipamoperators.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
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
import org.ipamoperators.egressip.api.EgressAnnotations;

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
}
