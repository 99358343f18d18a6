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
import org.ipamoperators.vip.legacy.LegacyKinds;
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
    "META-INF/fabric8/ipgroups.paas.org-v1.yml", "crds/ips.paas.org.yaml", "crds/virtualips.paas.org.yaml"},
    thirdPartyCrds = {ThirdPartyCrd.POD_MONITOR, ThirdPartyCrd.PROMETHEUS_RULE},
    auditLog = true)
class VipManifestsIT {
  /** Verbs the scenario below does not reach: the code path, and the test that runs it under these rules. */
  private static final Map<RbacUsage.Grant, String> USED_ELSEWHERE = Map.ofEntries(
      Map.entry(grant("", "events", "*"), "EventRecorder: Events on bad input and refusals; BadInputCorpusIT"),
      Map.entry(grant("ipam.ipamoperators.org", "ipclaims", "*"), "a claim that exists (get), a shared address's "
          + "members (update); SharingIT, SharedClaimsIT"),
      Map.entry(grant("paas.org", "virtualips", "update"), "VirtualIPMigration: the steps on a VirtualIP definition "
          + "without the status subresource; MigrationIT's definition has it, so none takes this path in a test")
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

    // The old operator's VirtualIP for a ClusterIP Service, its keepalived clone and its IP object: migrated below.
    String ns = client.getNamespace();
    client.services().resource(new ServiceBuilder().withNewMetadata().withName("app").endMetadata().withNewSpec()
        .addNewPort().withPort(80).withProtocol("TCP").endPort().endSpec().build()).create();
    GenericKubernetesResource legacy = legacyVirtualIp(client, "legacy", "app", "198.51.100.12");
    client.services().resource(new ServiceBuilder().withNewMetadata().withName("legacy-keepalived-clone")
        .addNewOwnerReference().withApiVersion("paas.org/v1").withKind("VirtualIP").withName("legacy")
        .withUid(legacy.getMetadata().getUid()).endOwnerReference().endMetadata().withNewSpec()
        .addNewPort().withPort(80).withProtocol("TCP").endPort().withExternalIPs("198.51.100.12").endSpec().build())
        .create();
    client.genericKubernetesResources(LegacyKinds.IP).resource(new io.fabric8.kubernetes.api.model
        .GenericKubernetesResourceBuilder().withApiVersion("paas.org/v1").withKind("IP").withNewMetadata()
        .withName("198.51.100.12").withLabels(Map.of(LegacyKinds.LABEL_GSM, "g1"))
        .withAnnotations(Map.of(LegacyKinds.OWNER_ANNOTATION, ns + "/legacy")).endMetadata().build()).create();

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

      // The VirtualIP migrates: its clone goes (owned by it), app becomes a LoadBalancer with its address.
      client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).withName("legacy").edit(v -> {
        v.getMetadata().setAnnotations(Map.of(LegacyKinds.MIGRATE_ANNOTATION, ""));
        return v;
      });
      await().atMost(WAIT).failFast(run::assertRunning).untilAsserted(() -> {
        Map<String, Object> status = client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).withName("legacy").get()
            .get("status");
        assertThat(status).containsEntry("state", LegacyKinds.MIGRATED);
        assertThat(client.services().withName("legacy-keepalived-clone").get()).isNull();
        assertThat(client.services().withName("app").get().getStatus().getLoadBalancer().getIngress())
            .extracting(LoadBalancerIngress::getIp).containsExactly("198.51.100.12");
      });

      // Deleting the Service frees its address (on its delete event, under the same rights).
      client.services().withName("web").delete();
      await().atMost(WAIT).failFast(run::assertRunning).untilAsserted(() -> {
        assertThat(client.services().withName("web").get()).isNull();
        assertThat(new ClusterLedger(client).get(ip)).isEmpty();
      });
      // What the chart's dashboards and alerts read is what this controller serves.
      ExportedMetrics.assertServed("vip", OperatorRun.get(run.httpPort(), "/metrics").body());
    } finally {
      run.close();
    }
    RbacUsage.assertExact(RbacUsage.granted(Manifests.objects("vip"), sa), RbacUsage.requests(server, mark, sa),
        USED_ELSEWHERE);
  }

  /** A Valid VirtualIP of the old operator, with its finalizers and status. */
  private static GenericKubernetesResource legacyVirtualIp(KubernetesClient client, String name, String service,
      String ip) {
    GenericKubernetesResource v = new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
        .withApiVersion("paas.org/v1").withKind("VirtualIP").withNewMetadata().withName(name)
        .withFinalizers(LegacyKinds.VIP_IP_FINALIZER, LegacyKinds.VIP_SERVICE_FINALIZER).endMetadata().build();
    v.setAdditionalProperty("spec", Map.of("service", service));
    v = client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).resource(v).create();
    v.setAdditionalProperty("status", Map.of("state", "Valid", "ip", ip, "service", service,
        "clonedService", name + "-keepalived-clone", "gsm", "g1", "keepalivedGroup", "keepalived-operator/kg"));
    return client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP).resource(v).updateStatus();
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
