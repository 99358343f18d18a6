package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two IPGroups whose addresses overlap: the older one serves, the younger is refused (Ready=False naming the
 * older group and the ranges, a Warning Event) and hands out no new address, while an address it gave before
 * stays with its Service. Deleting the older group lets the younger serve again.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class OverlappingGroupsIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final String REFUSAL = "192.0.2.0/28 overlaps IPGroup 'zold' (192.0.2.0/27)";
  private Operator operator;
  private VipCluster cluster;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    cluster = new VipCluster(client);
    operator = VipCluster.startOperator(server);
  }

  @AfterEach
  void stop() {
    operator.stop();
    cluster.close();
  }

  private Condition condition(String group, String type) {
    IPGroup g = cluster.group(group);
    if (g == null || g.getStatus() == null || g.getStatus().conditions() == null) {
      return new Condition();
    }
    return g.getStatus().conditions().stream().filter(c -> type.equals(c.getType())).findFirst()
        .orElseGet(Condition::new);
  }

  private List<Event> groupEvents(String group) {
    return cluster.client.v1().events().inAnyNamespace().list().getItems().stream()
        .filter(e -> "IPGroup".equals(e.getInvolvedObject().getKind()) && group.equals(e.getInvolvedObject().getName()))
        .toList();
  }

  private String pool(String ip) {
    return cluster.claim(ip).getSpec().pool();
  }

  @Test
  void theYoungerOfTwoOverlappingGroupsIsRefusedAndServesAgainWhenTheOlderGoes() {
    // "zold" is created first; its name sorts last, so only the creation time can make it the older.
    IPGroup old = cluster.group("zold", new IPGroupSpec(null, null, List.of("192.0.2.64/27"), null, null, null, null,
        null));
    Instant created = Instant.parse(old.getMetadata().getCreationTimestamp());
    await().atMost(WAIT).until(() -> Instant.now().isAfter(created.plusSeconds(1))); // creation times are in seconds
    cluster.group("ayoung", new IPGroupSpec("192.0.2.0/28", null, null, null, null, null, 10, null));
    cluster.create(cluster.lb("before").editMetadata().addToAnnotations(VipAnnotations.IP_GROUP, "ayoung").endMetadata());
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.ingress("before")).containsExactly("192.0.2.1"));

    // The older group is edited into the younger one's addresses: the younger is refused.
    cluster.client.resources(IPGroup.class).withName("zold").edit(g -> {
      g.setSpec(new IPGroupSpec(null, null, List.of("192.0.2.0/27"), null, null, null, null, null));
      return g;
    });
    await().atMost(WAIT).untilAsserted(() -> {
      Condition ready = condition("ayoung", "Ready");
      assertThat(ready.getStatus()).isEqualTo("False");
      assertThat(ready.getReason()).isEqualTo("OverlapsOlderGroup");
      assertThat(ready.getMessage()).contains(REFUSAL);
      assertThat(groupEvents("ayoung")).anySatisfy(e -> {
        assertThat(e.getType()).isEqualTo("Warning");
        assertThat(e.getReason()).isEqualTo("OverlapsOlderGroup");
        assertThat(e.getMessage()).contains(REFUSAL);
      });
      assertThat(condition("zold", "Ready").getStatus()).isEqualTo("True");
      assertThat(condition("zold", "Overlapping").getMessage()).contains("IPGroup(s) ayoung");
    });
    assertThat(groupEvents("zold")).noneSatisfy(e -> assertThat(e.getReason()).isEqualTo("OverlapsOlderGroup"));

    // Nothing new from the refused group: a Service naming it waits, and one the younger group's higher
    // priority would have served gets its address from the older group.
    cluster.create(cluster.lb("named").editMetadata().addToAnnotations(VipAnnotations.IP_GROUP, "ayoung").endMetadata());
    cluster.create(cluster.lb("auto"));
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.ingress("auto")).containsExactly("192.0.2.2");
      assertThat(pool("192.0.2.2")).isEqualTo("ipgroup/zold");
      Condition c = cluster.condition("named");
      assertThat(c).isNotNull();
      assertThat(c.getStatus()).isEqualTo("False");
      assertThat(c.getReason()).isEqualTo("NoPool");
      assertThat(c.getMessage()).contains("ayoung: refused").contains(REFUSAL);
    });
    assertThat(cluster.ingress("named")).isEmpty();
    // What the refused group gave stays with its Service.
    assertThat(cluster.ingress("before")).containsExactly("192.0.2.1");
    assertThat(pool("192.0.2.1")).isEqualTo("ipgroup/ayoung");

    // The older group goes: the younger serves again, and the waiting Service is served from it.
    cluster.client.resources(IPGroup.class).withName("zold").delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.ingress("named")).containsExactly("192.0.2.3");
      assertThat(pool("192.0.2.3")).isEqualTo("ipgroup/ayoung");
      assertThat(condition("ayoung", "Ready").getStatus()).isEqualTo("True");
      assertThat(condition("ayoung", "Overlapping").getStatus()).isEqualTo("False");
    });
    assertThat(cluster.ingress("before")).containsExactly("192.0.2.1");
    assertThat(cluster.ingress("auto")).containsExactly("192.0.2.2");
  }
}
