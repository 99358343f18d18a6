package org.ipamoperators.egressip.network;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.api.EgressAnnotations;

/**
 * Writes an EgressIPAM's decisions to OVN-Kubernetes: one cluster-scoped {@code k8s.ovn.org/v1
 * EgressIP} per served namespace, selecting it by name, and the {@code k8s.ovn.org/egress-assignable}
 * label on the nodes that may host egress IPs. OVN places and fails over the addresses itself. Our
 * objects carry a label naming the IPAM; nothing else is touched.
 */
public final class OvnWriter {
  static final ResourceDefinitionContext EGRESS_IP = new ResourceDefinitionContext.Builder()
      .withGroup("k8s.ovn.org").withVersion("v1").withKind("EgressIP").withPlural("egressips")
      .withNamespaced(false).build();
  private static final String NAME_PREFIX = "egressipam-";

  private final KubernetesClient client;

  public OvnWriter(KubernetesClient client) {
    this.client = client;
  }

  public static String objectName(String namespace) {
    return NAME_PREFIX + namespace;
  }

  public List<String> apply(NetworkWrite w) {
    List<String> failures = new ArrayList<>();
    var egressIps = client.genericKubernetesResources(EGRESS_IP);
    for (Map.Entry<String, List<Ip>> e : w.namespaces().entrySet()) {
      String name = objectName(e.getKey());
      List<String> ips = e.getValue().stream().map(Ip::toString).toList();
      GenericKubernetesResource current = egressIps.withName(name).get();
      if (current != null && !w.ipam().equals(label(current))) {
        failures.add("EgressIP " + name + " exists and is not managed by EgressIPAM " + w.ipam());
        continue;
      }
      if (current != null && Objects.equals(spec(current).get("egressIPs"), ips)) {
        continue;
      }
      GenericKubernetesResource desired = new GenericKubernetesResourceBuilder()
          .withApiVersion("k8s.ovn.org/v1").withKind("EgressIP")
          .withNewMetadata().withName(name).addToLabels(EgressAnnotations.MANAGED_BY, w.ipam()).endMetadata()
          .addToAdditionalProperties("spec", Map.of("egressIPs", ips, "namespaceSelector",
              Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", e.getKey()))))
          .build();
      try {
        if (current == null) {
          egressIps.resource(desired).create();
        } else {
          desired.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
          egressIps.resource(desired).update();
        }
      } catch (KubernetesClientException ex) {
        failures.add("EgressIP " + name + ": " + ex.getMessage());
      }
    }
    for (GenericKubernetesResource r : egressIps.withLabel(EgressAnnotations.MANAGED_BY, w.ipam()).list().getItems()) {
      String ns = r.getMetadata().getName().substring(NAME_PREFIX.length());
      if (!w.namespaces().containsKey(ns)) {
        try {
          egressIps.withName(r.getMetadata().getName()).delete();
        } catch (KubernetesClientException ex) {
          failures.add("EgressIP " + r.getMetadata().getName() + ": " + ex.getMessage());
        }
      }
    }
    labelNodes(w, failures);
    return failures;
  }

  private void labelNodes(NetworkWrite w, List<String> failures) {
    for (Node n : client.nodes().list().getItems()) {
      Map<String, String> labels = n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels();
      Map<String, String> annotations = n.getMetadata().getAnnotations() == null ? Map.of()
          : n.getMetadata().getAnnotations();
      boolean want = w.assignableNodes().contains(n.getMetadata().getName());
      boolean has = labels.containsKey(EgressAnnotations.OVN_EGRESS_ASSIGNABLE);
      boolean ourLabel = w.ipam().equals(annotations.get(EgressAnnotations.MANAGED_BY));
      try {
        if (want && !has) {
          client.nodes().withName(n.getMetadata().getName()).edit(x -> {
            x.getMetadata().getLabels().put(EgressAnnotations.OVN_EGRESS_ASSIGNABLE, "");
            if (x.getMetadata().getAnnotations() == null) {
              x.getMetadata().setAnnotations(new java.util.HashMap<>());
            }
            x.getMetadata().getAnnotations().put(EgressAnnotations.MANAGED_BY, w.ipam());
            return x;
          });
        } else if (!want && has && ourLabel) {
          client.nodes().withName(n.getMetadata().getName()).edit(x -> {
            x.getMetadata().getLabels().remove(EgressAnnotations.OVN_EGRESS_ASSIGNABLE);
            x.getMetadata().getAnnotations().remove(EgressAnnotations.MANAGED_BY);
            return x;
          });
        }
      } catch (KubernetesClientException ex) {
        failures.add("Node " + n.getMetadata().getName() + ": " + ex.getMessage());
      }
    }
  }

  private static String label(GenericKubernetesResource r) {
    return r.getMetadata().getLabels() == null ? null : r.getMetadata().getLabels().get(EgressAnnotations.MANAGED_BY);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(GenericKubernetesResource r) {
    Object s = r.getAdditionalProperties().get("spec");
    return s instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }
}
