package org.ipamoperators.keepalived.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.keepalived.KeepalivedControllers;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.PasswordAuth;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * The RBAC rules of the README ({@code rbac/keepalived-clusterrole.yaml}) are enough: the controller runs as a user
 * bound to exactly them and does its whole job (ids, ConfigMap, DaemonSet, PodMonitor, Events, status, finalizer,
 * release), and the user can do nothing else.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"})
class RbacIT {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String USER = "ipam-keepalived-rbac-it";

  @Test
  void theListedRulesAreEnoughForTheWholeJob(KubeApiServer server, KubernetesClient admin) {
    ClusterRole role = admin.rbac().clusterRoles().load(RbacIT.class.getResourceAsStream(
        "/rbac/keepalived-clusterrole.yaml")).item();
    admin.resource(role).createOr(x -> x.update());
    admin.resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(USER).endMetadata()
        .withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("ClusterRole")
        .withName(role.getMetadata().getName()).endRoleRef()
        .addNewSubject().withKind("User").withApiGroup("rbac.authorization.k8s.io").withName(USER).endSubject()
        .build()).createOr(x -> x.update());
    ThirdPartyCrd.install(admin, ThirdPartyCrd.POD_MONITOR);
    Config config = new ConfigBuilder(server.clientConfig()).withImpersonateUsername(USER)
        .withImpersonateGroups("system:authenticated").withNamespace(admin.getNamespace()).build();
    KeepalivedCluster cluster = new KeepalivedCluster(admin);
    try (KubernetesClient asOperator = new KubernetesClientBuilder().withConfig(config).build()) {
      await().atMost(WAIT).ignoreExceptions().untilAsserted(() ->
          assertThat(asOperator.resources(KeepalivedGroup.class).inAnyNamespace().list().getItems()).isNotNull());
      for (Runnable forbidden : List.<Runnable>of(
          () -> asOperator.pods().inAnyNamespace().list(),
          () -> asOperator.secrets().inAnyNamespace().list(), // the password Secret is read by name only
          () -> asOperator.secrets().inNamespace(admin.getNamespace()).watch(new io.fabric8.kubernetes.client.Watcher<>() {
            @Override
            public void eventReceived(Action action, io.fabric8.kubernetes.api.model.Secret resource) {}

            @Override
            public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {}
          }),
          () -> asOperator.secrets().inNamespace(admin.getNamespace()).resource(new SecretBuilder().withNewMetadata()
              .withName("x").endMetadata().build()).create(),
          () -> asOperator.services().inNamespace(admin.getNamespace()).withName("web").delete())) {
        assertThatThrownBy(forbidden::run).isInstanceOf(KubernetesClientException.class)
            .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
      }

      Operator operator = new Operator(o -> o.withKubernetesClient(asOperator).withCloseClientOnStop(false));
      KeepalivedControllers.register(operator, asOperator, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
          KeepalivedCluster.SETTINGS);
      operator.start();
      try {
        cluster.node("a", "203.0.113.10");
        admin.secrets().resource(new SecretBuilder().withNewMetadata().withName("vrrp").endMetadata()
            .withStringData(Map.of("password", "rbacpw")).build()).create();
        KeepalivedCluster.SpecBuilder spec = KeepalivedCluster.spec(cluster.ns);
        spec.passwordAuth = new PasswordAuth(new PasswordAuth.SecretRef("vrrp"), null);
        cluster.group("g1", spec.build());
        cluster.externalIps("web", "g1", "192.0.2.10");
        cluster.externalIps("lost", cluster.ns + "/nosuchgroup", "192.0.2.11");
        await().atMost(WAIT).untilAsserted(() -> {
          assertThat(cluster.config("g1", "a")).contains("192.0.2.10", "auth_pass rbacpw");
          assertThat(cluster.routerIds("g1")).containsKey(cluster.ns + "/web");
          assertThat(cluster.condition("g1", "Ready")).isEqualTo("True");
          assertThat(admin.apps().daemonSets().withName("g1").get()).isNotNull();
          assertThat(ThirdPartyCrd.POD_MONITOR.resources(admin).withName("g1").get()).isNotNull();
          assertThat(cluster.events("lost")).anySatisfy(e ->
              assertThat(e.getReason()).isEqualTo("KeepalivedGroupNotFound"));
        });
        assertThat(cluster.group("g1").getMetadata().getFinalizers()).contains(KeepalivedAnnotations.FINALIZER);
        admin.resources(KeepalivedGroup.class).withName("g1").delete();
        await().atMost(WAIT).untilAsserted(() -> {
          assertThat(cluster.group("g1")).isNull();
          assertThat(cluster.claimsOf("g1")).isEmpty();
        });
      } finally {
        operator.stop();
      }
    } finally {
      cluster.close();
      admin.rbac().clusterRoleBindings().withName(USER).delete();
      admin.rbac().clusterRoles().withName(role.getMetadata().getName()).delete();
    }
  }
}
