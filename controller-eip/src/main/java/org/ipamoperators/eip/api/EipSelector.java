package org.ipamoperators.eip.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.ValidationRule;

/** Exactly one of a pod or a node selector. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "has(self.pod) != has(self.node)", message = "set exactly one of pod or node")
public record EipSelector(PodTarget pod, NodeTarget node) {
  public static EipSelector pod(String podName) {
    return new EipSelector(new PodTarget(podName), null);
  }

  public static EipSelector node(java.util.Map<String, String> labels) {
    return new EipSelector(null, new NodeTarget(labels));
  }
}
