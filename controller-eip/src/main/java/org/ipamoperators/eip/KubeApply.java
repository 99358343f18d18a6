package org.ipamoperators.eip;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.ipamoperators.controller.common.kube.MergePatch;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Eip controller's Kubernetes writes: JSON merge patches of an Eip's status and spec, of a pod's annotations and
 * of a node's {@code ready-status} label, and the deletion of an autocreated Eip. A 404 on a status or pod patch is
 * ignored: the object is gone and its next event (if any) says so.
 */
final class KubeApply {
  private static final Logger LOG = LoggerFactory.getLogger(KubeApply.class);
  private final KubernetesClient client;
  private final ObjectWriter json = new ObjectMapper().writer();

  KubeApply(KubernetesClient client) {
    this.client = client;
  }

  /** JSON merge patch of the status subresource: a null removes a field (the old operator's included). */
  void patchStatus(Eip eip, Map<String, Object> fields) {
    try {
      MergePatch.applyStatus(client, Eip.class, eip.getMetadata().getNamespace(), eip.getMetadata().getName(),
          json(Map.of("status", fields)));
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }

  /** v1's podName into v2's selector, in place: the status (a subresource) is untouched. */
  void upgradeV1(Eip eip) {
    Map<String, Object> pod = Map.of("podName", eip.getSpec().podName());
    Map<String, Object> specPatch = new LinkedHashMap<>();
    specPatch.put("podName", null);
    specPatch.put("selector", Map.of("pod", pod));
    MergePatch.apply(client, Eip.class, eip.getMetadata().getNamespace(), eip.getMetadata().getName(),
        json(Map.of("spec", specPatch)));
  }

  void deleteEip(Eip eip) {
    client.resources(Eip.class).inNamespace(eip.getMetadata().getNamespace()).withName(eip.getMetadata().getName())
        .delete();
  }

  /** The annotations external-dns and users read, on the pod holding the address; nulls remove them. */
  void podAnnotations(String ns, String name, String allocationId, String publicIp) {
    Map<String, Object> annotations = new LinkedHashMap<>();
    annotations.put(EipNames.ALLOCATION_ID_ANNOTATION, allocationId);
    annotations.put(EipNames.EXTERNAL_DNS_TARGET_ANNOTATION, publicIp);
    Map<String, Object> metadata = Map.of("annotations", annotations);
    try {
      MergePatch.apply(client, Pod.class, ns, name, json(Map.of("metadata", metadata)));
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }

  /** A failure is logged only: the labels are written again at the next node-mode pass. */
  void labelNode(String name, String value) {
    try {
      MergePatch.apply(client, Node.class, null, name,
          json(Map.of("metadata", Map.of("labels", Map.of(EipNames.READY_STATUS_LABEL, value)))));
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        LOG.warn("cannot label node {}: {}", name, e.getMessage());
      }
    }
  }

  private String json(Object value) {
    try {
      return json.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
