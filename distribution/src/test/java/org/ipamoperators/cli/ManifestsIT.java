package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.cli.RbacUsage.grant;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnetBuilder;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespaceBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.ipamoperators.testsupport.LoopbackPorts;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The egressip manifests on the real apiserver: every object is accepted, and the operator, run
 * with the Deployment's own arguments under the manifests' ServiceAccount (a real token, RBAC
 * enforced), starts, leads and reconciles an OpenShift SDN EgressIPAM with nothing more.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.PROMETHEUS_RULE, ThirdPartyCrd.POD_MONITOR, ThirdPartyCrd.HOST_SUBNET,
        ThirdPartyCrd.NET_NAMESPACE},
    auditLog = true)
class ManifestsIT {
  /** Verbs the scenario below does not reach: the code path, and the test that runs it under these rules. */
  private static final Map<RbacUsage.Grant, String> USED_ELSEWHERE = Map.ofEntries(
      Map.entry(grant("", "events", "*"), "EventRecorder: Events when a pass finds something to report (create; get "
          + "and update when one recurs), not in every run of this scenario; BadInputCorpusIT, AwsOvnEgressIT"),
      Map.entry(grant("", "secrets", "get"), "AWS: the old operator's credentials Secret; AwsEgressIT"),
      Map.entry(grant("config.openshift.io", "infrastructures", "get"), "Platform: the platform type on a cloud; "
          + "AwsEgressIT, AzureEgressIT"),
      Map.entry(grant("k8s.ovn.org", "egressips", "*"), "OVN-Kubernetes: OvnWriter; OvnEgressIT, OvnStaleDeleteIT"),
      Map.entry(grant("", "nodes", "*"), "OVN-Kubernetes: the egress-assignable label (get, patch); OvnEgressIT"),
      Map.entry(grant("ipam.ipamoperators.org", "ipclaims", "delete"), "older versions' claims released; "
          + "LedgerMigrationIT"),
      Map.entry(grant("ipam.ipamoperators.org", "ipblocks", "*"), "a second entry in a block (update), an emptied "
          + "block (delete); OneHolderIT, SdnEgressIT"),
      Map.entry(grant("redhatcop.redhat.io", "egressipams", "get"), "EgressCleanup: an EgressIPAM being deleted; "
          + "SdnEgressIT"),
      Map.entry(grant("redhatcop.redhat.io", "egressipams/finalizers", "update"), "checked by the "
          + "OwnerReferencesPermissionEnforcement admission, which this apiserver does not run: never a request"),
      Map.entry(grant("network.openshift.io", "hostsubnets", "get"), "SdnWriter: re-read after a conflict; "
          + "SdnEgressIT"),
      Map.entry(grant("network.openshift.io", "netnamespaces", "get"), "SdnWriter: re-read after a conflict; "
          + "SdnEgressIT")
  );
  private static final Duration WAIT = Duration.ofSeconds(60);
  private final List<String> nodes = new ArrayList<>();
  private final List<String> namespaces = new ArrayList<>();

  @AfterEach
  void cleanUp(KubernetesClient client) {
    nodes.forEach(n -> client.nodes().withName(n).delete());
    namespaces.forEach(n -> client.namespaces().withName(n).delete());
  }

  /** A kubeconfig that authenticates as the ServiceAccount with a fresh token: RBAC as shipped applies. */
  static Path serviceAccountKubeconfig(KubeApiServer server, KubernetesClient client, ServiceAccount sa, Path dir)
      throws java.io.IOException {
    String token = client.serviceAccounts().inNamespace(Manifests.NAMESPACE).withName(sa.getMetadata().getName())
        .tokenRequest(new TokenRequestBuilder().withNewSpec().withExpirationSeconds(3600L).endSpec().build())
        .getStatus().getToken();
    Config admin = server.clientConfig();
    return OperatorRun.writeKubeconfig(dir, """
        apiVersion: v1
        kind: Config
        clusters:
          - name: test
            cluster:
              server: %s
              certificate-authority: %s
        users:
          - name: %s
            user:
              token: %s
        contexts:
          - name: operator
            context: {cluster: test, user: %s}
        current-context: operator
        """.formatted(server.url(), admin.getCaCertFile(), sa.getMetadata().getName(), token,
        sa.getMetadata().getName()));
  }

  /**
   * Runs the operator with the Deployment's arguments (on a free loopback port) under
   * {@code kubeconfig}, and waits until it is ready and holds the Deployment's Lease.
   */
  static OperatorRun startAsDeployment(Deployment deployment, Path kubeconfig, KubernetesClient client)
      throws Exception {
    return startAsDeployment(deployment, kubeconfig, client, List.of());
  }

  /** As above, with {@code settings} added to the Deployment's arguments (what its env would set). */
  static OperatorRun startAsDeployment(Deployment deployment, Path kubeconfig, KubernetesClient client,
      List<String> settings) throws Exception {
    List<String> args = new ArrayList<>(Manifests.operatorArgs(deployment).stream()
        .filter(a -> !a.startsWith("--http-port")).toList());
    args.addAll(settings);
    int port = LoopbackPorts.freePort();
    args.addAll(List.of("--kubeconfig", kubeconfig.toString(), "--http-port", Integer.toString(port),
        "--bind-address", "127.0.0.1", "--namespace", Manifests.NAMESPACE, "--audit-interval", "1s"));
    OperatorRun run = OperatorRun.start(args.toArray(String[]::new));
    try {
      run.awaitReady(port, "ok: leader\n");
      // The leader's audit runs under the same RBAC: it must be able to read what it audits.
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).failFast(run::assertRunning)
          .untilAsserted(() -> assertThat(OperatorRun.get(port, "/metrics").body())
              .containsPattern("ipam_audit_runs_total(\\{[^}]*\\})? [1-9]")
              .containsPattern("ipam_audit_failures_total(\\{[^}]*\\})? 0\\.0"));
      assertThat(client.resources(Lease.class).inNamespace(Manifests.NAMESPACE)
          .withName(Manifests.arg(deployment, "--lease-name")).get().getSpec().getHolderIdentity())
          .isEqualTo(run.command.identity());
      return run;
    } catch (RuntimeException | AssertionError e) {
      run.close();
      throw e;
    }
  }

  /** Applies every manifest with server-side apply: CRDs first, then the namespace, then the rest. */
  static void applyAll(KubernetesClient admin) {
    applyAll(admin, "egressip");
  }

  static void applyAll(KubernetesClient admin, String controller) {
    List<HasMetadata> all = new ArrayList<>(Manifests.objects(controller));
    all.sort((a, b) -> Integer.compare(order(a), order(b)));
    for (HasMetadata o : all) {
      admin.resource(o).fieldManager("ipam-test").forceConflicts().serverSideApply();
    }
  }

  private static int order(HasMetadata o) {
    if (o instanceof CustomResourceDefinition) {
      return 0;
    }
    return o instanceof Namespace ? 1 : 2;
  }

  @Test
  void everyManifestIsAcceptedByTheApiServer(KubeApiServer server) {
    KubernetesClient admin = server.adminClient();
    applyAll(admin);
    for (HasMetadata o : Manifests.objects("egressip")) {
      HasMetadata live = o instanceof GenericKubernetesResource g
          ? admin.genericKubernetesResources(g.getApiVersion(), g.getKind()).inNamespace(g.getMetadata().getNamespace())
              .withName(g.getMetadata().getName()).get()
          : admin.resource(o).get();
      assertThat(live).as("%s %s on the apiserver", o.getKind(), o.getMetadata().getName()).isNotNull();
    }
    // The alerts as the Prometheus Operator reads them back.
    GenericKubernetesResource rule = ThirdPartyCrd.PROMETHEUS_RULE.resources(admin).inNamespace(Manifests.NAMESPACE)
        .withName("egressip-utilization").get();
    List<Map<String, Object>> groups = rule.get("spec", "groups");
    assertThat(groups.toString()).contains("HighEgressIPUtilization", "ExtremelyHighEgressIPUtilization",
        "ipam_egressip_ip_capacity < +Inf");
  }

  @Test
  void theServiceAccountMayRunTheOperatorAndNothingElse(KubeApiServer server, KubernetesClient client,
      @TempDir Path dir) throws Exception {
    applyAll(server.adminClient());
    ServiceAccount sa = Manifests.one(Manifests.objects("egressip"), ServiceAccount.class);
    Path kubeconfig = serviceAccountKubeconfig(server, client, sa, dir);

    Deployment deployment = Manifests.one(Manifests.objects("egressip"), Deployment.class);
    String lease = Manifests.arg(deployment, "--lease-name");
    // RBAC is enforced for this identity: no Secrets, no Pods, no Leases but its own.
    try (KubernetesClient asSa = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        Config.fromKubeconfig(kubeconfig.toFile())).withRequestRetryBackoffLimit(0).build()).build()) {
      // The apiserver's RBAC cache takes a moment to see new bindings.
      await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
        assertThat(asSa.nodes().list().getItems()).isNotNull();
        assertThat(asSa.genericKubernetesResources(EgressFixtures.EGRESSIPAM).list().getItems()).isNotNull();
        assertThat(asSa.resources(Lease.class).inNamespace(Manifests.NAMESPACE).withName(lease).get()).isNull();
      });
      for (Runnable forbidden : List.<Runnable>of(
          () -> asSa.secrets().inAnyNamespace().list(),
          () -> asSa.secrets().inNamespace(Manifests.NAMESPACE).list(),
          () -> asSa.pods().inNamespace(Manifests.NAMESPACE).list(),
          () -> asSa.resources(Lease.class).inNamespace(Manifests.NAMESPACE).withName("another-lease").get(),
          () -> asSa.apiextensions().v1().customResourceDefinitions().list())) {
        assertThatThrownBy(forbidden::run).isInstanceOf(KubernetesClientException.class)
            .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
      }
    }

    // An OpenShift SDN cluster with one egress node and one opted-in namespace.
    String suffix = Long.toHexString(System.nanoTime() & 0xfffff);
    String node = "rbac-node-" + suffix;
    nodes.add(node);
    EgressFixtures.readyNode(client, node, Map.of("egress-zone", "a"));
    client.resources(HostSubnet.class).resource(new HostSubnetBuilder().withNewMetadata().withName(node)
        .endMetadata().withHost(node).withHostIP("203.0.113.10").withSubnet("10.128.2.0/23").build()).create();
    String ns = "rbac-ns-" + suffix;
    namespaces.add(ns);
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns)
        .addToAnnotations("egressip-ipam-operator.redhat-cop.io/egressipam", "rbac-ipam").endMetadata().build())
        .create();
    client.resources(NetNamespace.class).resource(new NetNamespaceBuilder().withNewMetadata().withName(ns)
        .endMetadata().withNetname(ns).withNetid(4242L).build()).create();
    EgressFixtures.egressIpam(client, "rbac-ipam", "192.0.2.0/28", "egress-zone", "a");

    // Every request of the operator's ServiceAccount from here on is checked against the chart's rules.
    long mark = server.auditMark();
    OperatorRun run = startAsDeployment(deployment, kubeconfig, client);
    try {
      await().atMost(WAIT).failFast(run::assertRunning).untilAsserted(() -> {
        Namespace n = client.namespaces().withName(ns).get();
        assertThat(n.getMetadata().getAnnotations())
            .containsEntry("egressip-ipam-operator.redhat-cop.io/egressips", "192.0.2.1");
        assertThat(client.resources(NetNamespace.class).withName(ns).get().getEgressIPs())
            .containsExactly("192.0.2.1");
        assertThat(client.resources(HostSubnet.class).withName(node).get().getEgressCIDRs())
            .containsExactly("192.0.2.0/28");
        GenericKubernetesResource ipam = client.genericKubernetesResources(EgressFixtures.EGRESSIPAM)
            .withName("rbac-ipam").get();
        List<Map<String, Object>> conditions = ipam.get("status", "conditions");
        assertThat(conditions).anySatisfy(c -> assertThat(c).containsEntry("type", "Ready")
            .containsEntry("status", "True"));
      });
    } finally {
      run.close();
    }
    assertThat(client.resources(Lease.class).inNamespace(Manifests.NAMESPACE).withName(lease).get()
        .getSpec().getHolderIdentity()).as("handed back under the Role's rights").isNull();

    RbacUsage.assertExact(RbacUsage.granted(Manifests.objects("egressip"), sa), RbacUsage.requests(server, mark, sa),
        USED_ELSEWHERE);
  }
}
