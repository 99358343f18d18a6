package org.ipamoperators.eip;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.plan.PodClaimant;
import org.ipamoperators.eip.plan.PodView;

/**
 * Reads of Kubernetes objects into the plain values the planners take, and the informers' change filters. No I/O,
 * no state.
 */
final class EipReads {
  static final String CONTROLLER = "eip";
  /** An ObjectReader is immutable, unlike the ObjectMapper it comes from. */
  private static final ObjectReader JSON = new ObjectMapper().reader();

  private EipReads() {}

  static String podName(Eip e) {
    EipSelector s = e.getSpec() == null ? null : e.getSpec().effectiveSelector();
    return s == null || s.pod() == null ? null : s.pod().podName();
  }

  static Map<String, String> nodeSelector(Eip e) {
    EipSelector s = e.getSpec() == null ? null : e.getSpec().effectiveSelector();
    return s == null || s.node() == null ? null : s.node().selector();
  }

  static Map<String, String> labels(HasMetadata o) {
    return o.getMetadata().getLabels() == null ? Map.of() : o.getMetadata().getLabels();
  }

  static String annotation(HasMetadata o, String key) {
    return o.getMetadata().getAnnotations() == null ? null : o.getMetadata().getAnnotations().get(key);
  }

  static boolean ready(Node n) {
    return n.getStatus() != null && n.getStatus().getConditions() != null && n.getStatus().getConditions().stream()
        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  static String internalIp(Node n) {
    if (n == null || n.getStatus() == null || n.getStatus().getAddresses() == null) {
      return null;
    }
    return n.getStatus().getAddresses().stream().filter(a -> "InternalIP".equals(a.getType()))
        .map(NodeAddress::getAddress).filter(a -> a != null && a.indexOf(':') < 0).findFirst().orElse(null);
  }

  /** Ours carry a label; the old operator's are named after their pod. */
  static boolean autocreated(Eip e, String podName) {
    return "true".equals(labels(e).get(EipNames.AUTOCREATED_LABEL)) || e.getMetadata().getName().equals(podName);
  }

  static PodClaimant claimant(Eip e, String podName) {
    String created = e.getMetadata().getCreationTimestamp();
    return new PodClaimant(e.getMetadata().getName(), autocreated(e, podName),
        created == null ? null : Instant.parse(created));
  }

  static PodView view(Pod p) {
    String manage = labels(p).get(EipNames.MANAGE_LABEL);
    return new PodView(p.getMetadata().getName(), manage != null && !"false".equalsIgnoreCase(manage),
        p.getMetadata().getDeletionTimestamp() != null, p.getSpec().getNodeName(),
        p.getStatus() == null ? null : p.getStatus().getPodIP());
  }

  static ClaimOwner owner(Eip eip) {
    return new ClaimOwner(CONTROLLER, "Eip", eip.getMetadata().getNamespace(), eip.getMetadata().getName(),
        eip.getMetadata().getUid());
  }

  /** The branch ENI (security groups for pods) of the VPC resource controller's pod annotation. */
  static Optional<String> branchEni(String annotation) {
    try {
      var list = JSON.readTree(annotation);
      if (list != null && list.isArray() && !list.isEmpty() && list.get(0).hasNonNull("eniId")
          && !list.get(0).get("eniId").asText().isBlank()) {
        return Optional.of(list.get(0).get("eniId").asText());
      }
    } catch (JsonProcessingException e) {
      // fall through: malformed
    }
    return Optional.empty();
  }

  static boolean podChanged(Pod n, Pod o) {
    return !Objects.equals(n.getStatus() == null ? null : n.getStatus().getPodIP(),
        o.getStatus() == null ? null : o.getStatus().getPodIP())
        || !Objects.equals(n.getSpec().getNodeName(), o.getSpec().getNodeName())
        || !Objects.equals(n.getMetadata().getDeletionTimestamp(), o.getMetadata().getDeletionTimestamp())
        || !Objects.equals(n.getMetadata().getLabels(), o.getMetadata().getLabels())
        || !Objects.equals(annotation(n, EipNames.POD_ENI_ANNOTATION), annotation(o, EipNames.POD_ENI_ANNOTATION))
        || !Objects.equals(n.getMetadata().getUid(), o.getMetadata().getUid());
  }

  static boolean nodeChanged(Node n, Node o) {
    Map<String, String> nl = new HashMap<>(labels(n));
    Map<String, String> ol = new HashMap<>(labels(o));
    nl.remove(EipNames.READY_STATUS_LABEL);
    ol.remove(EipNames.READY_STATUS_LABEL);
    return !nl.equals(ol) || ready(n) != ready(o)
        || !Objects.equals(n.getMetadata().getDeletionTimestamp(), o.getMetadata().getDeletionTimestamp())
        || !Objects.equals(n.getSpec().getProviderID(), o.getSpec().getProviderID())
        || !Objects.equals(internalIp(n), internalIp(o));
  }
}
