package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.cli.RbacUsage.grant;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The vip manifests on the real apiserver: every object is accepted, and the operator, run with the
 * Deployment's own arguments under the manifests' ServiceAccount (a real token, RBAC enforced),
 * gives a LoadBalancer Service an address from an IPGroup and takes it back when the Service goes.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.POD_MONITOR, ThirdPartyCrd.PROMETHEUS_RULE},
    auditLog = true)
class VipManifestsIT {
  /** Verbs the scenario below does not reach: the code path, and the test that runs it under these rules. */
  private static final Map<RbacUsage.Grant, String> USED_ELSEWHERE = Map.ofEntries(
      Map.entry(grant("", "events", "*"), "EventRecorder: Events on bad input and refusals; BadInputCorpusIT"),
      Map.entry(grant("", "services", "delete"), "VirtualIPMigration: the old operator's clone; MigrationIT"),
      Map.entry(grant("ipam.ipamoperators.org", "ipclaims", "*"), "a claim that exists (get), a shared address's "
          + "members (update); SharingIT, SharedClaimsIT"),
      Map.entry(grant("paas.org", "ips", "*"), "VirtualIPMigration: the old IP object relabelled; MigrationIT"),
      Map.entry(grant("paas.org", "virtualips", "*"), "VirtualIPMigration; MigrationIT"),
      Map.entry(grant("paas.org", "virtualips/status", "update"), "VirtualIPMigration's steps; MigrationIT")
  );
  private static final Duration WAIT = Duration.ofSeconds(60);
  private final List<String> groups = new ArrayList<>();

  @AfterEach
  void cleanUp(KubernetesClient client) {
    groups.forEach(g -> client.resources(IPGroup.class).withName(g).delete());
  }

  @Test
  void everyManifestIsAcceptedByTheApiServer(KubeApiServer server) {
    KubernetesClient admin = server.adminClient();
    ManifestsIT.applyAll(admin, "vip");
    for (HasMetadata o : Manifests.objects("vip")) {
      HasMetadata live = o instanceof GenericKubernetesResource g
          ? admin.genericKubernetesResources(g.getApiVersion(), g.getKind()).inNamespace(g.getMetadata().getNamespace())
              .withName(g.getMetadata().getName()).get()
          : admin.resource(o).get();
      assertThat(live).as("%s %s on the apiserver", o.getKind(), o.getMetadata().getName()).isNotNull();
    }
  }

  @Test
  void theServiceAccountMayRunTheVipOperatorAndNothingElse(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    ManifestsIT.applyAll(server.adminClient(), "vip");
    ServiceAccount sa = Manifests.one(Manifests.objects("vip"), ServiceAccount.class);
    Path kubeconfig = ManifestsIT.serviceAccountKubeconfig(server, client, sa, dir);
    Deployment deployment = Manifests.one(Manifests.objects("vip"), Deployment.class);

    try (KubernetesClient asSa = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        Config.fromKubeconfig(kubeconfig.toFile())).withRequestRetryBackoffLimit(0).build()).build()) {
      // The apiserver's RBAC cache takes a moment to see new bindings.
      await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
        assertThat(asSa.services().inAnyNamespace().list().getItems()).isNotNull();
        assertThat(asSa.resources(IPGroup.class).list().getItems()).isNotNull();
      });
      for (Runnable forbidden : List.<Runnable>of(
          () -> asSa.secrets().inAnyNamespace().list(),
          () -> asSa.nodes().list(),
          () -> asSa.pods().inAnyNamespace().list(),
          () -> asSa.resource(ipGroup("forbidden", "198.51.100.0/30")).create(),
          () -> asSa.namespaces().withName(client.getNamespace()).edit(n -> n),
          () -> asSa.resources(Lease.class).inNamespace(Manifests.NAMESPACE).withName("another-lease").get())) {
        assertThatThrownBy(forbidden::run).isInstanceOf(KubernetesClientException.class)
            .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
      }
    }

    String suffix = Long.toHexString(System.nanoTime() & 0xfffff);
    String group = "rbac-vips-" + suffix;
    groups.add(group);
    client.resource(ipGroup(group, "198.51.100.8/29")).create();

    // Every request of the operator's ServiceAccount from here on is checked against the chart's rules.
    long mark = server.auditMark();
    OperatorRun run = ManifestsIT.startAsDeployment(deployment, kubeconfig, client);
    try {
      client.services().resource(new ServiceBuilder().withNewMetadata().withName("web").endMetadata()
          .withNewSpec().withType("LoadBalancer").withAllocateLoadBalancerNodePorts(false)
          .withSelector(Map.of("app", "web")).addNewPort().withPort(443).withProtocol("TCP").endPort().endSpec()
          .build()).create();
      await().atMost(WAIT).failFast(run::assertRunning).untilAsserted(() -> {
        Service s = client.services().withName("web").get();
        assertThat(s.getStatus().getLoadBalancer().getIngress()).extracting(LoadBalancerIngress::getIp)
            .singleElement().satisfies(ip -> assertThat(ip).startsWith("198.51.100."));
        assertThat(s.getMetadata().getFinalizers()).isNullOrEmpty(); // none since issue 12
      });
      Ip ip = Ip.parse(client.services().withName("web").get().getStatus().getLoadBalancer().getIngress().get(0)
          .getIp());
      assertThat(new ClusterLedger(client).get(ip)).as("the ledger entry behind %s", ip).isPresent();

      // A Service the old operator left its finalizer on: the finalizer goes, once (get, then patch).
      client.services().resource(new ServiceBuilder().withNewMetadata().withName("old")
          .withFinalizers(VipAnnotations.LEGACY_FINALIZER).endMetadata().withNewSpec().withType("LoadBalancer")
          .withAllocateLoadBalancerNodePorts(false).addNewPort().withPort(80).withProtocol("TCP").endPort().endSpec()
          .build()).create();
      await().atMost(WAIT).failFast(run::assertRunning).untilAsserted(() ->
          assertThat(client.services().withName("old").get().getMetadata().getFinalizers()).isNullOrEmpty());

      // Deleting the Service frees its address (on its delete event, under the same rights).
      client.services().withName("web").delete();
      await().atMost(WAIT).failFast(run::assertRunning).untilAsserted(() -> {
        assertThat(client.services().withName("web").get()).isNull();
        assertThat(new ClusterLedger(client).get(ip)).isEmpty();
      });
    } finally {
      run.close();
    }
    RbacUsage.assertExact(RbacUsage.granted(Manifests.objects("vip"), sa), RbacUsage.requests(server, mark, sa),
        USED_ELSEWHERE);
  }

  /** The old operator's shape: a segment and nothing else. */
  private static GenericKubernetesResource ipGroup(String name, String segment) {
    GenericKubernetesResource g = new GenericKubernetesResource();
    g.setApiVersion("paas.org/v1");
    g.setKind("IPGroup");
    g.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).build());
    g.setAdditionalProperty("spec", Map.of("segment", segment));
    return g;
  }
}
