package org.ipamoperators.eip.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * v2 of k8s-eip-operator's Eip ({@code selector.pod.podName} or {@code selector.node.selector}), plus
 * {@code reclaimPolicy} and {@code allocation}. {@code podName} is v1's field: it stays in the schema so that Eips
 * stored as v1 keep it when read as v2 (the CRD has no conversion webhook), and the controller moves it into
 * {@code selector.pod.podName}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "has(self.selector) || has(self.podName)", message = "set selector (or the v1 podName)")
public record EipSpec(
    @JsonPropertyDescription("v1 field, deprecated: moved into selector.pod.podName by the controller")
    String podName,
    @JsonPropertyDescription("what holds the address: a pod, or one of the nodes matching a selector")
    EipSelector selector,
    @JsonPropertyDescription("Delete (default): the address is released with the Eip; Retain: it is kept,"
        + " disassociated and untagged")
    ReclaimPolicy reclaimPolicy,
    @JsonPropertyDescription("BYOIP pool or adoption of an existing address")
    EipAllocation allocation) {

  public enum ReclaimPolicy { Delete, Retain }

  public static EipSpec of(EipSelector selector) {
    return new EipSpec(null, selector, null, null);
  }

  /** The selector, with a v1 {@code podName} read as a pod selector. */
  public EipSelector effectiveSelector() {
    if (selector != null) {
      return selector;
    }
    return podName == null ? null : EipSelector.pod(podName);
  }

  public boolean retain() {
    return reclaimPolicy == ReclaimPolicy.Retain;
  }
}
