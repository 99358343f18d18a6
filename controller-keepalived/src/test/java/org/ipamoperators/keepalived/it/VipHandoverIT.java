package org.ipamoperators.keepalived.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.config.VipHandover;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.kube.WriteRefusal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A VIP that moves from one group to another is rendered by the new group only once the old group's configuration
 * no longer carries it, even while the old group's ConfigMap refuses every write; the refused write is retried with
 * back-off and the move completes within seconds of the refusal being lifted. Every version of both ConfigMaps is
 * watched while the test runs: no version of one may carry the VIP while the other's latest does.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"})
class VipHandoverIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final Duration REFUSED_FOR = Duration.ofSeconds(10);
  private static final Ip VIP = Ip.parse("192.0.2.30");
  private KeepalivedCluster cluster;
  private KubeApiServer server;
  private Operator operator;
  private SharedIndexInformer<ConfigMap> watch;
  private final Map<String, Boolean> carries = new ConcurrentHashMap<>();
  private final List<String> twoHolders = Collections.synchronizedList(new ArrayList<>());

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.server = server;
    cluster = new KeepalivedCluster(client);
    watch = client.configMaps().withLabel(KeepalivedAnnotations.GROUP_LABEL).inform(new ResourceEventHandler<>() {
      @Override
      public void onAdd(ConfigMap cm) {
        seen(cm, true);
      }

      @Override
      public void onUpdate(ConfigMap old, ConfigMap cm) {
        seen(cm, true);
      }

      @Override
      public void onDelete(ConfigMap cm, boolean unknown) {
        seen(cm, false);
      }
    });
  }

  private void seen(ConfigMap cm, boolean present) {
    String group = cm.getMetadata().getName();
    boolean now = present && VipHandover.rendered(cm.getData()).contains(VIP);
    carries.put(group, now);
    long holders = carries.values().stream().filter(b -> b).count();
    if (holders > 1) {
      twoHolders.add("ConfigMap " + group + " resourceVersion " + cm.getMetadata().getResourceVersion()
          + " carries " + VIP + " while another group's does: " + carries);
    }
  }

  @AfterEach
  void stop() {
    watch.close();
    if (operator != null) {
      operator.stop();
    }
    cluster.close();
  }

  @Test
  void aMovedVipIsRenderedByItsNewGroupOnlyOnceTheOldGroupsConfigurationLetItGo() throws Exception {
    operator = KeepalivedCluster.startOperator(server);
    cluster.node("a", "203.0.113.10");
    cluster.group("handover-a", KeepalivedCluster.spec(cluster.ns).build());
    cluster.group("handover-b", KeepalivedCluster.spec(cluster.ns).build());
    cluster.client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("handover-probe")
        .endMetadata().build()).create();
    cluster.externalIps("web", "handover-a", VIP.toString());
    await().atMost(WAIT).until(() -> cluster.config("handover-a", "a").contains(VIP.toString())
        && !cluster.configs("handover-b").isEmpty());

    try (WriteRefusal refusal = WriteRefusal.start(cluster.client, "refuse-" + cluster.ns + "-handover", "",
        "configmaps", List.of("handover-a"), "handover-probe", n -> cluster.client.configMaps()
            .withName("handover-probe").edit(c -> {
              c.getMetadata().setLabels(Map.of("probe", String.valueOf(n)));
              return c;
            }))) {
      cluster.annotate("web", KeepalivedAnnotations.GROUP, cluster.ns + "/handover-b");
      await().atMost(WAIT).until(() -> cluster.events("web").stream()
          .anyMatch(e -> "VIPHeldByAnotherGroup".equals(e.getReason()) && e.getMessage().contains("handover-a")));
      await().atMost(WAIT).until(() -> "False".equals(cluster.condition("handover-a", "Ready")));
      long until = System.nanoTime() + REFUSED_FOR.toNanos();
      while (System.nanoTime() < until) {
        assertThat(cluster.config("handover-a", "a")).as("a's configuration cannot change").contains(VIP.toString());
        assertThat(cluster.config("handover-b", "a")).as("b waits for a").doesNotContain(VIP.toString());
        Thread.sleep(300);
      }
      assertThat(cluster.condition("handover-b", "ServiceProblems")).isEqualTo("True");
      assertThat(refusal.effective()).isNotNull();
    }
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("handover-a", "a")).doesNotContain(VIP.toString());
      assertThat(cluster.config("handover-b", "a")).contains(VIP.toString());
    });
    await().atMost(WAIT).until(() -> "True".equals(cluster.condition("handover-a", "Ready"))
        && "False".equals(cluster.condition("handover-b", "ServiceProblems")));
    assertThat(twoHolders).as("versions of both ConfigMaps carrying the VIP at once").isEmpty();
  }
}
