package org.ipamoperators.testsupport.kube;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDR;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDRBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDRStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.util.List;

/**
 * More cluster IPs for tests that create hundreds of Services: the test apiserver's own Service
 * range is a /24. Adds a ServiceCIDR and marks it Ready, the part kube-controller-manager plays in a
 * cluster (there is none here).
 */
public final class ServiceRanges {
  private ServiceRanges() {
  }

  /** Adds {@code cidr} (a private range) as ServiceCIDR {@code name}; closing the result removes it. */
  public static AutoCloseable add(KubernetesClient client, String name, String cidr) {
    ServiceCIDR range = client.resource(new ServiceCIDRBuilder().withNewMetadata().withName(name).endMetadata()
        .withNewSpec().withCidrs(cidr).endSpec().build()).createOr(x -> x.update());
    range.setStatus(new ServiceCIDRStatus(List.of(new ConditionBuilder().withType("Ready").withStatus("True")
        .withReason("Test").withMessage("").withLastTransitionTime(Instant.now().toString()).build())));
    client.resource(range).updateStatus();
    return () -> client.resources(ServiceCIDR.class).withName(name).delete();
  }
}
