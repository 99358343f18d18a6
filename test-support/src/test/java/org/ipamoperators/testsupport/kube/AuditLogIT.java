package org.ipamoperators.testsupport.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code @KubeApiTest(auditLog = true)}: the requests made after a mark, who made them, and their codes. */
@KubeApiTest(auditLog = true)
class AuditLogIT {

  @Test
  void theLogTellsWhoDidWhatOnWhichObjectAndWithWhatResult(KubeApiServer server, KubernetesClient client) {
    assertThat(server).isSameAs(KubeApiServer.sharedAudited()).isNotSameAs(KubeApiServer.shared());
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("before").endMetadata().build())
        .create();
    long mark = server.auditMark();
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("audited").endMetadata().build())
        .create();
    client.services().resource(new ServiceBuilder().withNewMetadata().withName("web").endMetadata().withNewSpec()
        .addNewPort().withPort(80).endPort().endSpec().build()).create();
    client.services().withName("web").editStatus(s -> {
      s.getMetadata().setAnnotations(java.util.Map.of("audited", "yes"));
      return s;
    });
    assertThatThrownBy(() -> client.apps().deployments().withName("absent").edit(d -> d))
        .isInstanceOf(KubernetesClientException.class);
    client.configMaps().list();
    String ns = client.getNamespace();

    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      List<AuditEvent> mine = server.auditEvents(mark).stream().filter(e -> ns.equals(e.namespace())).toList();
      assertThat(mine).extracting(e -> e.verb() + " " + e.apiGroup() + " " + e.rbacResource() + " " + e.name()
          + " " + e.code()).containsSubsequence(
              "create  configmaps audited 201",
              "patch  services/status web 200",
              "get apps deployments absent 404",
              "list  configmaps null 200")
          .noneMatch(s -> s.contains("before"));
      assertThat(mine).allSatisfy(e -> assertThat(e.username()).isEqualTo(mine.get(0).username()));
    });
  }

  @Test
  void anApiServerWithoutTheLogRefusesToReadOne() {
    assertThatThrownBy(() -> KubeApiServer.shared().auditMark()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("auditLog = true");
  }
}
