package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.ipamoperators.testsupport.OrphanGuard;
import org.ipamoperators.testsupport.TestBinaries;
import org.ipamoperators.testsupport.node.RealNode;
import org.ipamoperators.testsupport.node.RealNodeTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Address;

/**
 * controller-eip from its own image ({@code ipam-operators/eip}: the one with the AWS SDK besides egressip's) as
 * the chart's two-replica Deployment on the real kubelet, against moto's EC2. moto listens on the node's address
 * (a documentation address on the node's port-less bridge) so that the pods reach it; the node itself is the EC2
 * instance (provider id set, private address = the node's InternalIP). A node-mode Eip gets an Elastic IP associated
 * with that address by the leader; the standby does nothing.
 */
@RealNodeTest(imageProperties = "ipam.image.eip")
class EipOnNodeIT {
  private static final Duration WAIT = Duration.ofMinutes(2);
  private static final String CLUSTER = "eip-on-node";
  private static Process moto;
  private static URI endpoint;
  private static Ec2Client ec2;
  private static String instance;

  @BeforeAll
  static void startMotoAndInstallChart(RealNode node) throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(RealNode.NODE_IP))) {
      port = s.getLocalPort();
    }
    endpoint = URI.create("http://" + RealNode.NODE_IP + ":" + port);
    Path log = Files.createTempFile("ipam-moto-node-", ".log");
    ProcessBuilder builder = new ProcessBuilder(OrphanGuard.guard(List.of(
        TestBinaries.fromEnvironment().motoServer().toString(), "-H", RealNode.NODE_IP, "-p",
        Integer.toString(port)))).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().keySet().removeIf(k -> k.startsWith("AWS_") || k.startsWith("MOTO_"));
    moto = builder.start();
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).until(() -> {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(RealNode.NODE_IP, port), 500);
        return true;
      } catch (IOException e) {
        assertThat(moto.isAlive()).as("moto_server running (log %s)", log).isTrue();
        return false;
      }
    });
    ec2 = Ec2Client.builder().endpointOverride(endpoint).region(Region.US_EAST_1)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
        .httpClientBuilder(UrlConnectionHttpClient.builder()).build();

    // The node is the instance: its InternalIP is the instance's private address.
    String vpc = ec2.createVpc(r -> r.cidrBlock("192.0.2.0/24")).vpc().vpcId();
    String subnet = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock("192.0.2.0/24").availabilityZone("us-east-1a"))
        .subnet().subnetId();
    instance = ec2.runInstances(r -> r.imageId("ami-12c6146b").instanceType("m5.large").subnetId(subnet)
        .privateIpAddress(RealNode.NODE_IP).minCount(1).maxCount(1)).instances().get(0).instanceId();
    KubernetesClient admin = node.adminClient();
    admin.nodes().withName(RealNode.NODE_NAME).edit(n -> {
      if (n.getSpec().getProviderID() == null || n.getSpec().getProviderID().isEmpty()) {
        n.getSpec().setProviderID("aws:///us-east-1a/" + instance);
      }
      n.getMetadata().getLabels().put(EipNames.MANAGE_LABEL, "true");
      n.getMetadata().getLabels().put("eip-on-node", "gateway");
      return n;
    });
    assertThat(admin.nodes().withName(RealNode.NODE_NAME).get().getSpec().getProviderID())
        .as("the node's provider id (settable once)").isEqualTo("aws:///us-east-1a/" + instance);

    ChartOnNode.install(node, List.of(), Map.of(
        "controllers.eip.enabled", true,
        "controllers.eip.settings.clusterName", CLUSTER,
        "controllers.eip.settings.awsRegion", "us-east-1",
        "controllers.eip.settings.awsEndpoint", endpoint.toString(),
        "controllers.eip.settings.resyncInterval", "5s",
        "controllers.eip.env[0].name", "AWS_ACCESS_KEY_ID",
        "controllers.eip.env[0].value", "test",
        "controllers.eip.env[1].name", "AWS_SECRET_ACCESS_KEY",
        "controllers.eip.env[1].value", "test"));
  }

  @AfterAll
  static void uninstall(RealNode node) throws InterruptedException {
    try {
      ChartOnNode.uninstall(node);
      node.adminClient().nodes().withName(RealNode.NODE_NAME).edit(n -> {
        n.getMetadata().getLabels().remove(EipNames.MANAGE_LABEL);
        n.getMetadata().getLabels().remove("eip-on-node");
        return n;
      });
    } finally {
      if (ec2 != null) {
        ec2.close();
      }
      if (moto != null) {
        moto.destroy();
        if (!moto.waitFor(10, TimeUnit.SECONDS)) {
          moto.destroyForcibly();
        }
      }
    }
  }

  @Test
  void theEipImageAssociatesANodeEipFromTheLeaderOfTwoReplicas(RealNode node, KubernetesClient client)
      throws Exception {
    KubernetesClient admin = node.adminClient();
    List<Pod> pods = ChartOnNode.awaitReady(admin, "eip");
    assertThat(pods).hasSize(2).allSatisfy(p -> {
      assertThat(p.getSpec().getContainers().get(0).getImage()).startsWith("ipam-operators/eip:");
      assertThat(p.getSpec().getServiceAccountName()).isEqualTo("ipam-eip");
      assertThat(p.getStatus().getContainerStatuses()).allSatisfy(s -> assertThat(s.getRestartCount()).isZero());
    });
    pods.forEach(p -> System.out.printf("%s: JVM start to Ready %d s%n", p.getMetadata().getName(),
        ChartOnNode.startToReady(p).toSeconds()));
    await().atMost(WAIT).untilAsserted(() -> assertThat(ChartOnNode.leader(admin, "eip")).isPresent());
    Pod leader = ChartOnNode.leader(admin, "eip").orElseThrow();
    Pod standby = pods.stream().filter(p -> !p.getMetadata().getName().equals(leader.getMetadata().getName()))
        .findFirst().orElseThrow();

    Eip eip = new Eip();
    eip.getMetadata().setName("gateway");
    eip.setSpec(EipSpec.of(EipSelector.node(Map.of("eip-on-node", "gateway"))));
    client.resource(eip).create();
    try {
      await().atMost(WAIT).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
        Eip live = client.resources(Eip.class).withName("gateway").get();
        assertThat(live.getStatus()).isNotNull();
        assertThat(live.getStatus().resourceId()).isEqualTo(RealNode.NODE_NAME);
        assertThat(live.getStatus().associationId()).isNotNull();
        assertThat(live.getStatus().privateIpAddress()).isEqualTo(RealNode.NODE_IP);
      });
      Address address = ec2.describeAddresses().addresses().get(0);
      assertThat(ec2.describeAddresses().addresses()).hasSize(1);
      assertThat(address.privateIpAddress()).isEqualTo(RealNode.NODE_IP);
      // moto records an association made by ENI with the ENI only: it is the instance's (the node's) interface.
      assertThat(address.networkInterfaceId()).isEqualTo(ec2.describeInstances(r -> r.instanceIds(instance))
          .reservations().get(0).instances().get(0).networkInterfaces().get(0).networkInterfaceId());
      assertThat(address.tags()).anySatisfy(t -> {
        assertThat(t.key()).isEqualTo(EipNames.TAG_CLUSTER);
        assertThat(t.value()).isEqualTo(CLUSTER);
      });
      // The AWS calls came from the leader pod (the standby's log has no association).
      String leaderLog = admin.pods().inNamespace(ChartOnNode.NAMESPACE).withName(leader.getMetadata().getName())
          .getLog();
      assertThat(ChartOnNode.http(leader, "/metrics")).contains("ipam_operator_leader 1.0");
      assertThat(ChartOnNode.http(standby, "/metrics")).contains("ipam_operator_leader 0.0");
      System.out.printf("eip on the node: %s associated with %s by %s%n", address.publicIp(),
          address.privateIpAddress(), leader.getMetadata().getName());
      assertThat(leaderLog).doesNotContain("NoClassDefFoundError").doesNotContain("ClassNotFoundException");
    } finally {
      client.resources(Eip.class).withName("gateway").delete();
      await().atMost(WAIT).untilAsserted(() -> {
        assertThat(client.resources(Eip.class).withName("gateway").get()).isNull();
        assertThat(ec2.describeAddresses().addresses()).isEmpty();
      });
    }
  }
}
