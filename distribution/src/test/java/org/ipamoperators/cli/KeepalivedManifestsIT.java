package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.cli.RbacUsage.grant;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.LoadBalancerIngressBuilder;
import io.fabric8.kubernetes.api.model.LoadBalancerStatus;
import io.fabric8.kubernetes.api.model.NodeAddressBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServiceStatus;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
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
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.keepalived.Keepalived;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.netns.NetnsExtension;
import org.ipamoperators.testsupport.netns.NetworkLab;
import org.ipamoperators.testsupport.netns.NetworkNamespace;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The keepalived manifests on the real apiserver: the operator, run with the Deployment's own
 * arguments under the manifests' ServiceAccount (RBAC enforced), renders a group's configuration for
 * an annotated LoadBalancer Service into the group's ConfigMap (accepted by the real keepalived) and
 * creates its DaemonSet and PodMonitor; the Deployment hands the DaemonSets this chart's image.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.POD_MONITOR, ThirdPartyCrd.PROMETHEUS_RULE},
    auditLog = true)
class KeepalivedManifestsIT {
  private static final String SSA_CREATE = "GroupDependents: server-side apply of an object that does not exist is "
      + "authorized as create besides patch, and logged as a patch";
  /** Verbs the scenario below does not reach: the code path, and the test that runs it under these rules. */
  private static final Map<RbacUsage.Grant, String> USED_ELSEWHERE = Map.ofEntries(
      Map.entry(grant("", "events", "*"), "EventRecorder: Events on refused Services and groups; "
          + "KeepalivedPolicyIT, BadInputCorpusIT"),
      Map.entry(grant("", "configmaps", "create"), SSA_CREATE),
      Map.entry(grant("apps", "daemonsets", "create"), SSA_CREATE),
      Map.entry(grant("monitoring.coreos.com", "podmonitors", "create"), SSA_CREATE),
      Map.entry(grant("", "secrets", "get"), "PasswordSecrets: a group's passwordAuth; KeepalivedGroupLifecycleIT"),
      Map.entry(grant("ipam.ipamoperators.org", "idclaims", "*"), "router ids retired and released (update, "
          + "delete), a conflict (get); GroupDeletionGraceIT"),
      Map.entry(grant("redhatcop.redhat.io", "keepalivedgroups", "get"), "OrphanRouterIdReconciler: an id's owner; "
          + "GroupDeletionGraceIT"),
      Map.entry(grant("redhatcop.redhat.io", "keepalivedgroups/finalizers", "update"), "checked by the "
          + "OwnerReferencesPermissionEnforcement admission, which this apiserver does not run: never a request")
  );
  private static final Duration WAIT = Duration.ofSeconds(60);
  private final List<String> nodes = new ArrayList<>();

  @AfterEach
  void cleanUp(KubernetesClient client) {
    nodes.forEach(n -> client.nodes().withName(n).delete());
  }

  @Test
  void theServiceAccountMayRunTheKeepalivedOperatorAndNothingElse(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    ManifestsIT.applyAll(server.adminClient(), "keepalived");
    ServiceAccount sa = Manifests.one(Manifests.objects("keepalived"), ServiceAccount.class);
    Path kubeconfig = ManifestsIT.serviceAccountKubeconfig(server, client, sa, dir);
    Deployment deployment = Manifests.one(Manifests.objects("keepalived"), Deployment.class);
    assertThat(deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv())
        .filteredOn(e -> e.getName().startsWith("IPAM_KEEPALIVED_"))
        .extracting(e -> e.getName() + "=" + e.getValue()).containsExactlyInAnyOrder(
            "IPAM_KEEPALIVED_IMAGE=" + deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getImage(),
            "IPAM_KEEPALIVED_RELOADER_IMAGE=" + deployment.getSpec().getTemplate().getSpec().getContainers().get(0)
                .getImage());

    try (KubernetesClient asSa = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        Config.fromKubeconfig(kubeconfig.toFile())).withRequestRetryBackoffLimit(0).build()).build()) {
      await().atMost(WAIT).ignoreExceptions().untilAsserted(() ->
          assertThat(asSa.configMaps().inAnyNamespace().list().getItems()).isNotNull());
      for (Runnable forbidden : List.<Runnable>of(
          () -> asSa.pods().inAnyNamespace().list(),
          () -> asSa.secrets().inNamespace(client.getNamespace()).resource(new io.fabric8.kubernetes.api.model
              .SecretBuilder().withNewMetadata().withName("x").endMetadata().build()).create(),
          () -> asSa.services().inNamespace(client.getNamespace()).resource(new ServiceBuilder().withNewMetadata()
              .withName("x").endMetadata().withNewSpec().addNewPort().withPort(1).endPort().endSpec().build()).create(),
          () -> asSa.nodes().resource(new NodeBuilder().withNewMetadata().withName("x").endMetadata().build())
              .create())) {
        assertThatThrownBy(forbidden::run).isInstanceOf(KubernetesClientException.class)
            .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
      }
    }

    String ns = client.getNamespace();
    String node = ns + "-lb";
    nodes.add(node);
    client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).withLabels(Map.of("lb", ns))
        .endMetadata().build()).create();
    client.nodes().withName(node).editStatus(n -> {
      n.getStatus().getAddresses().add(new NodeAddressBuilder().withType("InternalIP").withAddress("192.0.2.20")
          .build());
      return n;
    });
    GenericKubernetesResource group = new GenericKubernetesResource();
    group.setApiVersion("redhatcop.redhat.io/v1alpha1");
    group.setKind("KeepalivedGroup");
    group.setMetadata(new ObjectMetaBuilder().withName("vips").withNamespace(ns).build());
    group.setAdditionalProperty("spec", Map.of("interface", "eth0", "nodeSelector", Map.of("lb", ns)));
    client.resource(group).create();
    client.services().resource(new ServiceBuilder().withNewMetadata().withName("web")
        .withAnnotations(Map.of("keepalived-operator.redhat-cop.io/keepalivedgroup", ns + "/vips")).endMetadata()
        .withNewSpec().withType("LoadBalancer").withAllocateLoadBalancerNodePorts(false)
        .withSelector(Map.of("app", "web")).addNewPort().withPort(80).withProtocol("TCP").endPort().endSpec()
        .build()).create();
    client.services().withName("web").editStatus(s -> {
      s.setStatus(new ServiceStatus());
      s.getStatus().setLoadBalancer(new LoadBalancerStatus(List.of(new LoadBalancerIngressBuilder()
          .withIp("198.51.100.40").build())));
      return s;
    });

    // Every request of the operator's ServiceAccount from here on is checked against the chart's rules.
    long mark = server.auditMark();
    OperatorRun run = ManifestsIT.startAsDeployment(deployment, kubeconfig, client);
    try {
      await().atMost(WAIT).failFast(run::assertRunning).untilAsserted(() -> {
        ConfigMap cm = client.configMaps().withName("vips").get();
        assertThat(cm).isNotNull();
        assertThat(cm.getData()).containsKey(node);
        assertThat(cm.getData().get(node)).contains("198.51.100.40", "virtual_router_id");
        DaemonSet ds = client.resources(DaemonSet.class).withName("vips").get();
        assertThat(ds).isNotNull();
        // The DaemonSet's `ipam` containers call this build's command line with arguments it accepts.
        var spec = ds.getSpec().getTemplate().getSpec();
        List<io.fabric8.kubernetes.api.model.Container> ipamContainers = new ArrayList<>(spec.getInitContainers());
        ipamContainers.addAll(spec.getContainers());
        ipamContainers.removeIf(c -> c.getCommand() == null || !c.getCommand().equals(List.of("ipam")));
        assertThat(ipamContainers).hasSize(2);
        for (var c : ipamContainers) {
          String[] args = c.getArgs().stream().map(a -> a.replace("$(NODE_NAME)", node)).toArray(String[]::new);
          assertThat(IpamCommand.commandLine().parseArgs(args).subcommand().commandSpec().name())
              .isEqualTo("keepalived-reloader");
        }
        assertThat(ThirdPartyCrd.POD_MONITOR.resources(client).withName("vips").get()).isNotNull();
      });
      // What the chart's dashboards and alerts read is what this controller serves.
      ExportedMetrics.assertServed("keepalived", OperatorRun.get(run.httpPort(), "/metrics").body());
    } finally {
      run.close();
    }
    RbacUsage.assertExact(RbacUsage.granted(Manifests.objects("keepalived"), sa), RbacUsage.requests(server, mark, sa),
        USED_ELSEWHERE);
    // keepalived checks that the interface exists: judge the node's file in a namespace that has eth0.
    NetnsExtension.requireNetworkNamespaces();
    try (NetworkLab lab = NetworkLab.create()) {
      NetworkNamespace host = lab.namespace("kg-node");
      lab.veth(host, "eth0", lab.namespace("kg-peer"), "peer0");
      host.addAddress("eth0", "192.0.2.20/24");
      var check = Keepalived.locate().checkConfig(client.configMaps().withName("vips").get().getData().get(node), host);
      assertThat(check.valid()).as("keepalived --config-test: %s", check.output()).isTrue();
    }
  }
}
