package org.ipamoperators.testsupport.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** The extension's own contract: a namespace per test, cleanup of cluster-scoped objects, one server per JVM. */
@KubeApiTest(thirdPartyCrds = ThirdPartyCrd.NET_NAMESPACE)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeApiExtensionIT {

  private static String firstNamespace;

  @Test
  @Order(1)
  void givesEachTestItsOwnNamespaceAndANamespacedClient(KubernetesClient client, Namespace namespace,
      KubeApiServer server) {
    firstNamespace = namespace.getMetadata().getName();
    assertThat(client.getNamespace()).isEqualTo(firstNamespace);
    assertThat(namespace.getMetadata().getLabels()).containsEntry(KubeApiExtension.TEST_NAMESPACE_LABEL, "true");
    assertThat(server).isSameAs(KubeApiServer.shared());
    assertThat(server.url()).startsWith("https://127.0.0.1:");
    assertThat(client.getKubernetesVersion().getGitVersion()).isEqualTo("v" + server.version());

    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("left-behind").endMetadata()
        .withData(Map.of("k", "v")).build()).create();
    ThirdPartyCrd.NET_NAMESPACE.resources(client).resource(new GenericKubernetesResourceBuilder()
        .withApiVersion("network.openshift.io/v1").withKind("NetNamespace")
        .withNewMetadata().withName("left-behind").endMetadata()
        .withAdditionalProperties(Map.of("netname", "left-behind", "netid", 7))
        .build()).create();
  }

  @Test
  @Order(2)
  void previousTestsNamespaceIsDeletedAndItsClusterScopedObjectsAreGone(KubernetesClient client,
      Namespace namespace) {
    assertThat(namespace.getMetadata().getName()).isNotEqualTo(firstNamespace);
    Namespace previous = client.namespaces().withName(firstNamespace).get();
    // No namespace controller runs, so the namespace stays Terminating (and refuses new objects).
    assertThat(previous == null || previous.getMetadata().getDeletionTimestamp() != null).isTrue();
    assertThat(ThirdPartyCrd.NET_NAMESPACE.resources(client).list().getItems()).isEmpty();
  }
}
