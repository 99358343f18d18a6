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

  /** Applies the write; {@code nodes}: every node as last seen (the informer's view). */
  public List<String> apply(NetworkWrite w, java.util.Collection<Node> nodes) {
    List<String> failures = new ArrayList<>();
    var egressIps = client.genericKubernetesResources(EGRESS_IP);
    // One listing of this IPAM's objects per pass, not one GET per namespace.
    Map<String, GenericKubernetesResource> mine = new java.util.HashMap<>();
    for (GenericKubernetesResource r : egressIps.withLabel(EgressAnnotations.MANAGED_BY, w.ipam()).list().getItems()) {
      mine.put(r.getMetadata().getName(), r);
    }
    for (Map.Entry<String, List<Ip>> e : w.namespaces().entrySet()) {
      String name = objectName(e.getKey());
      List<String> ips = e.getValue().stream().map(Ip::toString).toList();
      GenericKubernetesResource current = mine.get(name);
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
          try {
            egressIps.resource(desired).create();
          } catch (KubernetesClientException ex) {
            if (ex.getCode() != 409) {
              throw ex;
            }
            failures.add("EgressIP " + name + " exists and is not managed by EgressIPAM " + w.ipam());
          }
        } else {
          desired.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
          egressIps.resource(desired).update();
        }
      } catch (KubernetesClientException ex) {
        failures.add("EgressIP " + name + ": " + ex.getMessage());
      }
    }
    for (GenericKubernetesResource r : mine.values()) {
      String ns = r.getMetadata().getName().substring(NAME_PREFIX.length());
      if (!w.namespaces().containsKey(ns)) {
        try {
          egressIps.withName(r.getMetadata().getName()).delete();
        } catch (KubernetesClientException ex) {
          failures.add("EgressIP " + r.getMetadata().getName() + ": " + ex.getMessage());
        }
      }
    }
    labelNodes(w, nodes, failures);
    return failures;
  }

  /** Reading the nodes straight from the API server (cleanup). */
  public List<String> apply(NetworkWrite w) {
    return apply(w, client.nodes().list().getItems());
  }

  private void labelNodes(NetworkWrite w, java.util.Collection<Node> nodes, List<String> failures) {
    for (Node n : nodes) {
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

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(GenericKubernetesResource r) {
    Object s = r.getAdditionalProperties().get("spec");
    return s instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }
}
