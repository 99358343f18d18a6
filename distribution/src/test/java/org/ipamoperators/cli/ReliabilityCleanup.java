package org.ipamoperators.cli;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import java.util.List;

/**
 * Removes what a reliability run made, for good: with the operator stopped, its finalizers would keep the
 * Services and namespaces (and their published addresses) in the shared apiserver, where the next test's
 * audit would find them.
 */
final class ReliabilityCleanup {
  private ReliabilityCleanup() {}

  static void services(KubernetesClient client, String namespace) {
    client.services().inNamespace(namespace).list().getItems().forEach(s -> dropFinalizers(client, s));
    client.services().inNamespace(namespace).delete();
  }

  static void namespaces(KubernetesClient client, String label, String value) {
    List<Namespace> gone = client.namespaces().withLabel(label, value).list().getItems();
    gone.forEach(n -> dropFinalizers(client, n));
    client.namespaces().withLabel(label, value).delete();
    if (client.supports(NetNamespace.class)) { // OpenShift SDN deletes a namespace's NetNamespace with it
      gone.forEach(n -> client.resources(NetNamespace.class).withName(n.getMetadata().getName()).delete());
    }
  }

  private static void dropFinalizers(KubernetesClient client, HasMetadata o) {
    if (o.getMetadata().getFinalizers() == null || o.getMetadata().getFinalizers().isEmpty()) {
      return;
    }
    try {
      client.resource(o).edit(x -> {
        x.getMetadata().setFinalizers(List.of());
        return x;
      });
    } catch (KubernetesClientException e) {
      // gone meanwhile
    }
  }
}
