package org.ipamoperators.controller.common.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/** A merge patch is one request: the API server counts no GET of the object for it. */
@KubeApiTest
class MergePatchIT {
  private static final Pattern REQUESTS = Pattern.compile("^apiserver_request_total\\{([^}]*)\\} ([0-9.e+]+)$",
      Pattern.MULTILINE);

  /** The API server's count of requests of a verb on a resource (any subresource, any code). */
  private static double requests(KubernetesClient client, String resource, String verb) {
    double total = 0;
    Matcher m = REQUESTS.matcher(client.raw("/metrics"));
    while (m.find()) {
      if (m.group(1).contains("resource=\"" + resource + "\"") && m.group(1).contains("verb=\"" + verb + "\"")) {
        total += Double.parseDouble(m.group(2));
      }
    }
    return total;
  }

  @Test
  void aClusterScopedObjectIsPatchedWithoutReadingItFirst(KubernetesClient client) {
    String name = "merge-patch-" + System.nanoTime();
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
    double gets = requests(client, "namespaces", "GET");
    double patches = requests(client, "namespaces", "PATCH");

    Namespace answer = MergePatch.apply(client, Namespace.class, null, name,
        "{\"metadata\":{\"annotations\":{\"example.org/a\":\"1\"}}}");

    assertThat(answer.getMetadata().getAnnotations()).containsEntry("example.org/a", "1");
    assertThat(requests(client, "namespaces", "PATCH")).isEqualTo(patches + 1);
    assertThat(requests(client, "namespaces", "GET")).isEqualTo(gets);
    assertThat(client.namespaces().withName(name).get().getMetadata().getAnnotations())
        .containsEntry("example.org/a", "1");
  }

  @Test
  void aNamespacedObjectAndItsStatusArePatchedWithoutReadingThemFirst(KubernetesClient client) {
    String ns = client.getNamespace();
    client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName("lb").endMetadata()
        .withNewSpec().withType("LoadBalancer").addNewPort().withPort(80).endPort().endSpec().build()).create();
    double gets = requests(client, "services", "GET");

    Service labelled = MergePatch.apply(client, Service.class, ns, "lb", "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");
    Service published = MergePatch.applyStatus(client, Service.class, ns, "lb",
        "{\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"192.0.2.10\"}]}}}");

    assertThat(labelled.getMetadata().getLabels()).containsEntry("a", "b");
    assertThat(published.getStatus().getLoadBalancer().getIngress()).singleElement()
        .satisfies(i -> assertThat(i.getIp()).isEqualTo("192.0.2.10"));
    assertThat(requests(client, "services", "GET")).isEqualTo(gets);
    Service now = client.services().inNamespace(ns).withName("lb").get();
    assertThat(now.getMetadata().getLabels()).containsEntry("a", "b");
    assertThat(now.getStatus().getLoadBalancer().getIngress()).hasSize(1);
  }
}
