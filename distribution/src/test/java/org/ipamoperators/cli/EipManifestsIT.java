package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.cli.RbacUsage.grant;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Instance;

/**
 * The eip manifests on the real apiserver: every object is accepted, and {@code ipam operator --controllers eip},
 * run with the Deployment's own arguments under the manifests' ServiceAccount (a real token, RBAC enforced) against
 * moto, gives a node-mode Eip an Elastic IP on a node and releases it when the Eip goes.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/eips.materialize.cloud-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.POD_MONITOR, ThirdPartyCrd.PROMETHEUS_RULE},
    auditLog = true)
@MotoTest
class EipManifestsIT {
  /** Verbs the scenario below does not reach: the code path, and the test that runs it under these rules. */
  private static final Map<RbacUsage.Grant, String> USED_ELSEWHERE = Map.ofEntries(
      Map.entry(grant("", "events", "update"), "EventRecorder: an Event recurring after its quiet period is "
          + "counted up; EipCloudFaultIT counts them"),
      Map.entry(grant("", "pods", "*"), "pod mode: PodMode, EipPodReconciler; PodModeIT"),
      Map.entry(grant("", "nodes", "get"), "pod mode: the node of a pod; PodModeIT"),
      Map.entry(grant("materialize.cloud", "eips", "*"), "pod mode: Eips autocreated and deleted for pods; PodModeIT")
  );
  private static final Duration WAIT = Duration.ofSeconds(60);
  private String node;

  @AfterEach
  void cleanUp(KubernetesClient client) {
    for (String p : List.of("aws.accessKeyId", "aws.secretAccessKey")) {
      System.clearProperty(p);
    }
    if (node != null) {
      client.nodes().withName(node).delete();
    }
    client.resources(Eip.class).list().getItems().forEach(e -> client.resources(Eip.class)
        .withName(e.getMetadata().getName()).edit(x -> {
          x.getMetadata().setFinalizers(List.of());
          return x;
        }));
  }

  @Test
  void everyManifestIsAcceptedByTheApiServer(KubeApiServer server) {
    KubernetesClient admin = server.adminClient();
    ManifestsIT.applyAll(admin, "eip");
    for (HasMetadata o : Manifests.objects("eip")) {
      HasMetadata live = o instanceof GenericKubernetesResource g
          ? admin.genericKubernetesResources(g.getApiVersion(), g.getKind()).inNamespace(g.getMetadata().getNamespace())
              .withName(g.getMetadata().getName()).get()
          : admin.resource(o).get();
      assertThat(live).as("%s %s on the apiserver", o.getKind(), o.getMetadata().getName()).isNotNull();
    }
  }

  @Test
  void theServiceAccountMayRunTheEipOperatorAndNothingElse(KubeApiServer server, KubernetesClient client,
      MotoServer moto, Ec2Client ec2, @TempDir Path dir) throws Exception {
    ManifestsIT.applyAll(server.adminClient(), "eip");
    ServiceAccount sa = Manifests.one(Manifests.objects("eip"), ServiceAccount.class);
    Path kubeconfig = ManifestsIT.serviceAccountKubeconfig(server, client, sa, dir);
    Deployment deployment = Manifests.one(Manifests.objects("eip"), Deployment.class);

    try (KubernetesClient asSa = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        Config.fromKubeconfig(kubeconfig.toFile())).withRequestRetryBackoffLimit(0).build()).build()) {
      await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
        assertThat(asSa.pods().inAnyNamespace().list().getItems()).isNotNull();
        assertThat(asSa.resources(Eip.class).inAnyNamespace().list().getItems()).isNotNull();
      });
      for (Runnable forbidden : List.<Runnable>of(
          () -> asSa.secrets().inAnyNamespace().list(),
          () -> asSa.services().inAnyNamespace().list(),
          () -> asSa.configMaps().inAnyNamespace().list(),
          () -> asSa.pods().inNamespace(client.getNamespace()).withName("x").delete(),
          () -> asSa.namespaces().withName(client.getNamespace()).edit(n -> n),
          () -> asSa.resources(Lease.class).inNamespace(Manifests.NAMESPACE).withName("another-lease").get())) {
        assertThatThrownBy(forbidden::run).isInstanceOf(KubernetesClientException.class)
            .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
      }
    }

    // EC2: one instance as the node.
    String vpc = ec2.createVpc(r -> r.cidrBlock("10.0.0.0/16")).vpc().vpcId();
    String subnet = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock("10.0.1.0/24").availabilityZone("us-east-1a"))
        .subnet().subnetId();
    Instance i = ec2.runInstances(r -> r.imageId("ami-12c6146b").instanceType("m5.large").subnetId(subnet)
        .minCount(1).maxCount(1)).instances().get(0);
    node = "eip-manifests-" + Long.toHexString(System.nanoTime() & 0xfffff);
    var n = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node)
        .withLabels(Map.of(EipNames.MANAGE_LABEL, "true", "role", node)).endMetadata()
        .withNewSpec().withProviderID("aws:///us-east-1a/" + i.instanceId()).endSpec().build()).create();
    n.setStatus(new io.fabric8.kubernetes.api.model.NodeStatusBuilder().addNewAddress().withType("InternalIP")
        .withAddress(i.privateIpAddress()).endAddress().withConditions(new NodeConditionBuilder().withType("Ready")
            .withStatus("True").withLastTransitionTime(Instant.now().toString()).build()).build());
    client.nodes().resource(n).updateStatus();

    // The settings a Deployment gets from its env or the chart's settings, as options; the AWS SDK's credentials
    // as its system properties.
    List<String> settings = List.of("--eip-cluster-name", "manifests-test", "--eip-aws-region",
        MotoServer.REGION.id(), "--eip-aws-endpoint", moto.endpoint().toString());
    System.setProperty("aws.accessKeyId", "test");
    System.setProperty("aws.secretAccessKey", "test");
    // Every request of the operator's ServiceAccount from here on is checked against the chart's rules.
    long mark = server.auditMark();
    OperatorRun run = ManifestsIT.startAsDeployment(deployment, kubeconfig, client, settings);
    try {
      Eip e = new Eip();
      e.getMetadata().setName("gw");
      e.setSpec(EipSpec.of(EipSelector.node(Map.of("role", node))));
      client.resource(e).create();
      await().atMost(WAIT).failFast(run::assertRunning).untilAsserted(() -> {
        Eip live = client.resources(Eip.class).withName("gw").get();
        assertThat(live.getStatus()).isNotNull();
        assertThat(live.getStatus().resourceId()).isEqualTo(node);
        assertThat(live.getStatus().associationId()).isNotNull();
        assertThat(client.nodes().withName(node).get().getMetadata().getLabels())
            .containsEntry(EipNames.READY_STATUS_LABEL, "true");
      });
      assertThat(ec2.describeAddresses().addresses()).singleElement()
          .satisfies(a -> assertThat(a.privateIpAddress()).isEqualTo(i.privateIpAddress()));

      client.resources(Eip.class).withName("gw").delete();
      await().atMost(WAIT).failFast(run::assertRunning).untilAsserted(() -> {
        assertThat(client.resources(Eip.class).withName("gw").get()).isNull();
        assertThat(ec2.describeAddresses().addresses()).isEmpty();
      });
      // What the chart's dashboards and alerts read is what this controller serves.
      ExportedMetrics.assertServed("eip", OperatorRun.get(run.httpPort(), "/metrics").body());
    } finally {
      run.close();
    }
    RbacUsage.assertExact(RbacUsage.granted(Manifests.objects("eip"), sa), RbacUsage.requests(server, mark, sa),
        USED_ELSEWHERE);
  }
}
