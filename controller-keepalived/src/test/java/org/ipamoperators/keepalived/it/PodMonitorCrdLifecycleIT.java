package org.ipamoperators.keepalived.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.keepalived.KeepalivedControllers;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The PodMonitor CRD removed and installed again while one operator runs: the groups stay Ready and keep being
 * reconciled without it, and their PodMonitors come back when it returns, from the CRD's own events (the wait is
 * far below the groups' periodic reconcile). The operator runs as a user bound to the module's RBAC rules
 * ({@code rbac/keepalived-clusterrole.yaml}) with the chart's verbs for PodMonitors and CRDs, which are fewer.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"})
class PodMonitorCrdLifecycleIT {
  static final Duration WAIT = Duration.ofSeconds(30);
  private static final String USER = "ipam-keepalived-podmonitor-it";
  /** The chart's verbs (templates/_rules.tpl, ipam.rules.keepalived) where they are fewer than the module's. */
  private static final Map<String, List<String>> CHART_VERBS = Map.of(
      "podmonitors", List.of("list", "watch", "create", "patch"),
      "customresourcedefinitions", List.of("list", "watch"));
  private Operator operator;
  private KeepalivedCluster cluster;
  private KubernetesClient client;
  private KubernetesClient asOperator;

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client) {
    this.client = client;
    cluster = new KeepalivedCluster(client);
    if (!podMonitorsServed()) {
      ThirdPartyCrd.install(client, ThirdPartyCrd.POD_MONITOR);
    }
    bindRole();
    asOperator = new KubernetesClientBuilder().withConfig(new ConfigBuilder(server.clientConfig())
        .withImpersonateUsername(USER).withImpersonateGroups("system:authenticated")
        .withNamespace(client.getNamespace()).build()).build();
    // RBAC caches catch up with a new binding within a moment.
    await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> assertThat(ThirdPartyCrd.POD_MONITOR
        .resources(asOperator).inAnyNamespace().list().getItems()).isNotNull());
    operator = new Operator(o -> o.withKubernetesClient(asOperator).withCloseClientOnStop(false));
    KeepalivedControllers.register(operator, asOperator, new SimpleMeterRegistry(), KeepalivedCluster.SETTINGS);
    operator.start();
  }

  @AfterEach
  void stop() {
    operator.stop();
    asOperator.close();
    cluster.close();
    client.rbac().clusterRoleBindings().withName(USER).delete();
    client.rbac().clusterRoles().withName(USER).delete();
    // The API server is shared by the module's test classes: leave the CRD as this class found it.
    if (!podMonitorsServed()) {
      ThirdPartyCrd.install(client, ThirdPartyCrd.POD_MONITOR);
    }
  }

  private void bindRole() {
    ClusterRole role = client.rbac().clusterRoles().load(PodMonitorCrdLifecycleIT.class.getResourceAsStream(
        "/rbac/keepalived-clusterrole.yaml")).item();
    role.getMetadata().setName(USER);
    List<String> narrowed = new ArrayList<>();
    for (PolicyRule rule : role.getRules()) {
      rule.getResources().stream().filter(CHART_VERBS::containsKey).findFirst().ifPresent(r -> {
        assertThat(rule.getResources()).containsExactly(r);
        rule.setVerbs(CHART_VERBS.get(r));
        narrowed.add(r);
      });
    }
    assertThat(narrowed).containsExactlyInAnyOrderElementsOf(CHART_VERBS.keySet());
    client.resource(role).createOr(x -> x.update());
    client.resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(USER).endMetadata()
        .withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("ClusterRole").withName(USER).endRoleRef()
        .addNewSubject().withKind("User").withApiGroup("rbac.authorization.k8s.io").withName(USER).endSubject()
        .build()).createOr(x -> x.update());
  }

  @AfterAll
  static void everyConfigurationPassesKeepalivedsConfigTest() {
    KeepalivedCluster.checkEverySeenConfiguration();
  }

  @Test
  void podMonitorsComeBackWhenTheCrdIsInstalledAgain() {
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    cluster.externalIps("web", "g1", "192.0.2.10");
    await().atMost(WAIT).untilAsserted(() -> {
      assertPodMonitor("g1");
      assertThat(readyMessage("g1")).endsWith(", PodMonitor");
    });

    deletePodMonitorCrd();
    // Ready, reconciled since (the message no longer names a PodMonitor), and it stays so.
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.condition("g1", "Ready")).isEqualTo("True");
      assertThat(readyMessage("g1")).contains("metrics on port").doesNotContain("PodMonitor");
    });
    await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(cluster.condition("g1", "Ready")).isEqualTo("True"));
    // The groups keep being reconciled: a new Service of g1 is announced, a new group gets its objects.
    cluster.externalIps("api", "g1", "192.0.2.11");
    cluster.group("g2", KeepalivedCluster.spec(cluster.ns).build());
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.config("g1", "a")).contains("192.0.2.10", "192.0.2.11");
      assertThat(client.configMaps().withName("g2").get()).isNotNull();
      assertThat(client.apps().daemonSets().withName("g2").get()).isNotNull();
      assertThat(cluster.condition("g2", "Ready")).isEqualTo("True");
      assertThat(readyMessage("g2")).contains("metrics on port").doesNotContain("PodMonitor");
    });
    // A PodMonitor write in the moment the CRD terminates (discovery still serves it) is refused and reported;
    // nothing else warns, and g2, created after, has no warning at all.
    assertThat(cluster.events("g1")).filteredOn(e -> "Warning".equals(e.getType()))
        .allSatisfy(e -> assertThat(e.getMessage()).contains("/podmonitors/g1"));
    assertThat(cluster.events("g2")).noneSatisfy(e -> assertThat(e.getType()).isEqualTo("Warning"));

    // Installed again: both groups get their PodMonitor, with no change to them and no restart.
    ThirdPartyCrd.install(client, ThirdPartyCrd.POD_MONITOR);
    await().atMost(WAIT).untilAsserted(() -> {
      assertPodMonitor("g1");
      assertPodMonitor("g2");
      assertThat(readyMessage("g1")).endsWith(", PodMonitor");
      assertThat(readyMessage("g2")).endsWith(", PodMonitor");
    });
    // The PodMonitor informer runs again: one deleted by hand is written again.
    ThirdPartyCrd.POD_MONITOR.resources(client).withName("g1").delete();
    await().atMost(WAIT).untilAsserted(() -> assertThat(ThirdPartyCrd.POD_MONITOR.resources(client).withName("g1")
        .get()).isNotNull().satisfies(pm -> assertThat(pm.getMetadata().getDeletionTimestamp()).isNull()));
  }

  /**
   * The CRD deleted while no group is reconciled (the only group with a PodMonitor is gone), so nothing
   * deregisters the PodMonitor informer before its watch fails: the operator keeps running, and a group created
   * later gets its objects, and its PodMonitor once the CRD is back.
   */
  @Test
  void theCrdGoingWhileNoGroupReconcilesStopsNothing() {
    cluster.node("a", "203.0.113.10");
    cluster.group("g1", KeepalivedCluster.spec(cluster.ns).build());
    await().atMost(WAIT).untilAsserted(() -> assertPodMonitor("g1"));
    client.resources(KeepalivedGroup.class).withName("g1").delete();
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.group("g1")).isNull());

    deletePodMonitorCrd();
    // Long enough for the informer's watch to fail and be retried.
    await().pollDelay(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(11)).until(() -> true);
    cluster.group("g2", KeepalivedCluster.spec(cluster.ns).build());
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(client.apps().daemonSets().withName("g2").get()).isNotNull();
      assertThat(cluster.condition("g2", "Ready")).isEqualTo("True");
      assertThat(readyMessage("g2")).contains("metrics on port").doesNotContain("PodMonitor");
    });
    ThirdPartyCrd.install(client, ThirdPartyCrd.POD_MONITOR);
    await().atMost(WAIT).untilAsserted(() -> {
      assertPodMonitor("g2");
      assertThat(readyMessage("g2")).endsWith(", PodMonitor");
    });
  }

  private void deletePodMonitorCrd() {
    client.apiextensions().v1().customResourceDefinitions().withName(ThirdPartyCrd.POD_MONITOR.crdName()).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      CustomResourceDefinition crd = client.apiextensions().v1().customResourceDefinitions()
          .withName(ThirdPartyCrd.POD_MONITOR.crdName()).get();
      assertThat(crd).isNull();
      assertThat(podMonitorsServed()).isFalse();
    });
  }

  private boolean podMonitorsServed() {
    var resources = client.getApiResources(ThirdPartyCrd.POD_MONITOR.apiVersion());
    return resources != null && resources.getResources().stream()
        .anyMatch(r -> ThirdPartyCrd.POD_MONITOR.kind().equals(r.getKind()));
  }

  private void assertPodMonitor(String group) {
    GenericKubernetesResource pm = ThirdPartyCrd.POD_MONITOR.resources(client).withName(group).get();
    assertThat(pm).as("PodMonitor " + group).isNotNull();
    assertThat(pm.getMetadata().getLabels()).containsEntry(KeepalivedAnnotations.GROUP_LABEL, group);
    assertThat(pm.getMetadata().getOwnerReferences()).singleElement()
        .satisfies(r -> assertThat(r.getName()).isEqualTo(group));
  }

  private String readyMessage(String group) {
    KeepalivedGroup g = cluster.group(group);
    if (g == null || g.getStatus() == null || g.getStatus().conditions() == null) {
      return "";
    }
    return g.getStatus().conditions().stream().filter(c -> "Ready".equals(c.getType()))
        .map(c -> c.getMessage()).findFirst().orElse("");
  }
}
