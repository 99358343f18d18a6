package org.ipamoperators.cli;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** Objects the egressip tests create, written as YAML so they do not depend on the model classes. */
final class EgressFixtures {
  static final ResourceDefinitionContext EGRESSIPAM = new ResourceDefinitionContext.Builder()
      .withGroup("redhatcop.redhat.io").withVersion("v1alpha1").withKind("EgressIPAM").withPlural("egressipams")
      .withNamespaced(false).build();

  private EgressFixtures() {
  }

  /** An EgressIPAM with one CIDR for the nodes labelled {@code topologyLabel=labelValue}. */
  static GenericKubernetesResource egressIpam(KubernetesClient client, String name, String cidr,
      String topologyLabel, String labelValue) {
    String yaml = """
        apiVersion: redhatcop.redhat.io/v1alpha1
        kind: EgressIPAM
        metadata:
          name: %s
        spec:
          topologyLabel: %s
          cidrAssignments:
            - CIDR: %s
              labelValue: "%s"
        """.formatted(name, topologyLabel, cidr, labelValue);
    GenericKubernetesResource r = client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class);
    return client.genericKubernetesResources(EGRESSIPAM).resource(r).create();
  }

  /** A Ready worker node with labels. */
  static void readyNode(KubernetesClient client, String name, Map<String, String> labels) {
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).withLabels(labels)
        .addToLabels("node-role.kubernetes.io/worker", "").endMetadata().build()).create();
    var node = client.nodes().withName(name).get();
    NodeCondition ready = new NodeConditionBuilder().withType("Ready").withStatus("True").withReason("KubeletReady")
        .withLastTransitionTime(Instant.now().toString()).withLastHeartbeatTime(Instant.now().toString()).build();
    node.setStatus(new NodeStatus());
    node.getStatus().setConditions(List.of(ready));
    client.nodes().resource(node).updateStatus();
  }
}
