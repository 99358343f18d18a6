package org.ipamoperators.eip.api;

import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * {@code Eip} v1 (served, not stored): {@code spec.podName}. The API server stores what v1 clients write as v2
 * with {@code spec.podName}; the controller moves it into {@code selector.pod.podName}, keeping the status.
 */
@Group(EipNames.GROUP)
@Version(value = "v1", storage = false, served = true)
@Kind("Eip")
@Plural("eips")
@Singular("eip")
public class EipV1 extends CustomResource<EipV1.Spec, EipStatus> implements Namespaced {
  private static final long serialVersionUID = 1L;

  /** v1's only field; optional, so that objects already moved to v2 can still be read and written through v1. */
  public record Spec(String podName) {}
}
