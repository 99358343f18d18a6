package org.ipamoperators.vip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.Test;

/**
 * The status write against a real API server: a write that changes the ingress carries the
 * resourceVersion of the view it was planned from, so a view that is behind (as a second replica's
 * informer may be for a moment after a leadership change) cannot replace the addresses a Service
 * shows; a write of the condition alone is not conditioned.
 */
@KubeApiTest
class ServiceStatusWriterIT {
  @Test
  void aStaleViewCannotReplaceTheIngressAServiceShows(KubernetesClient client) {
    Service fresh = client.services().resource(new ServiceBuilder().withNewMetadata().withName("stale-view")
        .endMetadata().withNewSpec().withType("LoadBalancer").withAllocateLoadBalancerNodePorts(false)
        .addNewPort().withPort(80).endPort().endSpec().build()).create();
    ServiceStatusWriter writer = new ServiceStatusWriter(client, new OwnStatusWrites());
    Ingress.Held first = new Ingress.Held(List.of(Ip.parse("192.0.2.10")));
    writer.write(fresh, first.publishable(List.of(Ip.parse("192.0.2.10"))).orElseThrow(), condition("one"));
    assertThat(VipServices.ingress(client.services().withName("stale-view").get())).containsExactly("192.0.2.10");

    // A replica whose informer still shows the Service as created, without an address.
    Ingress.Held other = new Ingress.Held(List.of(Ip.parse("192.0.2.11")));
    assertThatThrownBy(() -> writer.write(fresh, other.publishable(List.of(Ip.parse("192.0.2.11"))).orElseThrow(),
        condition("two"))).isInstanceOf(ServiceStatusWriter.StaleView.class).hasMessageContaining("stale-view");
    Service now = client.services().withName("stale-view").get();
    assertThat(VipServices.ingress(now)).as("the address shown stays").containsExactly("192.0.2.10");

    // From the current view the same change is written; a condition alone needs no current view.
    writer.write(now, Ingress.without(VipServices.ingress(now), Set.of("192.0.2.10")), condition("three"));
    assertThat(VipServices.ingress(client.services().withName("stale-view").get())).isEmpty();
    writer.write(now, Ingress.unchanged(), condition("four"));
    Service last = client.services().withName("stale-view").get();
    assertThat(last.getStatus().getConditions()).anySatisfy(c -> assertThat(c.getMessage()).isEqualTo("four"));
    assertThat(VipServices.ingress(last)).as("a condition written from a stale view leaves the ingress alone").isEmpty();
  }

  @Test
  void aServiceGoneIsTheClientsNotFound(KubernetesClient client) {
    Service gone = new ServiceBuilder().withNewMetadata().withName("never-created").withNamespace(client.getNamespace())
        .withResourceVersion("1").endMetadata().withNewSpec().withType("LoadBalancer").endSpec().build();
    Ingress.Held held = new Ingress.Held(List.of(Ip.parse("192.0.2.12")));
    assertThatThrownBy(() -> new ServiceStatusWriter(client, new OwnStatusWrites()).write(gone,
        held.publishable(List.of(Ip.parse("192.0.2.12"))).orElseThrow(), condition("gone")))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(404))
        .hasMessageContaining("never-created");
  }

  private static io.fabric8.kubernetes.api.model.Condition condition(String message) {
    return new ConditionBuilder().withType(VipAnnotations.CONDITION).withStatus("True").withReason("Assigned")
        .withMessage(message).build();
  }
}
