package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.javaoperatorsdk.operator.Operator;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.cloud.aws.Ec2NodeNetworkProvider;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.egressip.EgressIPAMReconciler;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.cloud.CloudNodeNetworks;
import org.ipamoperators.egressip.cloud.CloudSettings;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;

/**
 * OVN-Kubernetes on AWS: the real apiserver with OVN's EgressIP API and no OpenShift SDN, an
 * Infrastructure that says AWS, moto's EC2 behind the real SDK. Where OpenShift's
 * cloud-network-config-controller runs (its egress-ipconfig annotation on the nodes) it attaches
 * each EgressIP's addresses where OVN placed them, so this controller attaches nothing; without it
 * (vanilla OVN-Kubernetes on AWS) the controller attaches as before. Addresses are data only.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.EGRESS_IP, ThirdPartyCrd.INFRASTRUCTURE})
@MotoTest
class AwsOvnEgressIT {
  private static final Duration WAIT = Duration.ofSeconds(40);
  private static final String ZONE = "topology.kubernetes.io/zone";
  private static final Map<String, String> WORKERS = Map.of("node-role.kubernetes.io/worker", "");
  private static final String CIDR_A = "198.51.100.0/26";
  private static final String LEFT = "CloudAttachmentLeftToOpenShift";
  private static final ResourceDefinitionContext EGRESS_IP = new ResourceDefinitionContext.Builder()
      .withGroup("k8s.ovn.org").withVersion("v1").withKind("EgressIP").withPlural("egressips").withNamespaced(false)
      .build();
  private Operator operator;
  private EgressCluster cluster;
  private KubernetesClient client;
  private Ec2Client ec2;
  private String subnetA;
  private String operatorNs;
  private final Map<String, String> instances = new HashMap<>();

  @BeforeAll
  static void noSdnHere(KubeApiServer server) {
    EgressCluster.withoutOpenShiftSdn(server);
  }

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client, MotoServer moto, Ec2Client ec2, TestInfo info) {
    this.client = client;
    this.ec2 = ec2;
    cluster = new EgressCluster(client, EgressCluster.prefix(info), false);
    String vpc = ec2.createVpc(r -> r.cidrBlock("198.51.100.0/24")).vpc().vpcId();
    subnetA = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock(CIDR_A).availabilityZone("us-east-1a")).subnet().subnetId();
    var infras = client.genericKubernetesResources("config.openshift.io/v1", "Infrastructure");
    infras.resource(new GenericKubernetesResourceBuilder().withApiVersion("config.openshift.io/v1")
        .withKind("Infrastructure").withNewMetadata().withName("cluster").endMetadata()
        .addToAdditionalProperties("spec", Map.of()).build()).create();
    var current = infras.withName("cluster").get();
    current.setAdditionalProperty("status", Map.of("platform", "AWS",
        "platformStatus", Map.of("type", "AWS", "aws", Map.of("region", "us-east-1"))));
    infras.resource(current).updateStatus();
    operatorNs = cluster.n("op");
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(operatorNs).endMetadata().build())
        .create();
    client.secrets().inNamespace(operatorNs).resource(new SecretBuilder().withNewMetadata()
        .withName(Ec2NodeNetworkProvider.CREDENTIALS_SECRET).endMetadata()
        .addToStringData("aws_access_key_id", "test").addToStringData("aws_secret_access_key", "test").build())
        .create();
    KubernetesClient c = server.newClient();
    operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
    operator.register(new EgressIPAMReconciler(c, Clock.systemUTC(),
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
        new CloudNodeNetworks(c, new CloudSettings(Map.of("aws.endpoint", moto.endpoint().toString()), operatorNs,
            null))));
    operator.start();
  }

  @AfterEach
  void stop() {
    if (operator != null) {
      operator.stop();
    }
    cluster.close();
    client.namespaces().withName(operatorNs).delete();
    client.genericKubernetesResources("config.openshift.io/v1", "Infrastructure").withName("cluster").delete();
  }

  /** An EC2 instance and its Node in zone a; with {@code cncc}, the annotation OpenShift's CNCC writes. */
  private void worker(String name, boolean cncc) {
    Instance i = ec2.runInstances(r -> r.imageId("ami-12c6146b").instanceType("m5.large").subnetId(subnetA)
        .minCount(1).maxCount(1)).instances().get(0);
    instances.put(name, i.instanceId());
    cluster.cloudNode(name, Map.of(ZONE, "a"), "aws:///" + i.placement().availabilityZone() + "/" + i.instanceId(),
        i.privateIpAddress());
    if (cncc) {
      String eni = eniOf(name).networkInterfaceId();
      client.nodes().withName(cluster.n(name)).edit(x -> {
        x.getMetadata().getAnnotations().put(EgressAnnotations.CLOUD_EGRESS_IPCONFIG, "[{\"interface\":\"" + eni
            + "\",\"ifaddr\":{\"ipv4\":\"" + CIDR_A + "\"},\"capacity\":{\"ipv4\":14,\"ipv6\":15}}]");
        return x;
      });
    }
  }

  private NetworkInterface eniOf(String node) {
    return Enis.primary(ec2, instances.get(node));
  }

  /** The secondary addresses on the node's device-index-0 ENI. */
  private Set<String> onEni(String node) {
    return Enis.secondaryAddresses(ec2, instances.get(node));
  }

  /** The lowest address of the subnet that is neither AWS-reserved nor on any ENI. */
  private Ip firstFree() {
    Set<Ip> used = new TreeSet<>();
    ec2.describeNetworkInterfaces(r -> r.filters(f -> f.name("subnet-id").values(subnetA))).networkInterfaces()
        .forEach(n -> n.privateIpAddresses().forEach(a -> used.add(Ip.parse(a.privateIpAddress()))));
    Ip ip = IpRange.parse(CIDR_A).first().next().next().next().next();
    while (used.contains(ip)) {
      ip = ip.next();
    }
    return ip;
  }

  /** Another tool's address on its own ENI, at the first free address: allocation must skip it. */
  private Ip foreignAddress() {
    Ip taken = firstFree();
    String eni = ec2.createNetworkInterface(r -> r.subnetId(subnetA)).networkInterface().networkInterfaceId();
    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(eni).privateIpAddresses(taken.toString()));
    return taken;
  }

  private String readyMessage(String ipam) {
    EgressIPAM x = client.resources(EgressIPAM.class).withName(ipam).get();
    return x == null || x.getStatus() == null || x.getStatus().conditions() == null ? "" : x.getStatus().conditions()
        .stream().filter(c -> "Ready".equals(c.getType())).map(c -> c.getMessage()).findFirst().orElse("");
  }

  @SuppressWarnings("unchecked")
  private List<String> egressIpAddresses(String ns) {
    GenericKubernetesResource e = client.genericKubernetesResources(EGRESS_IP).withName("egressipam-" + cluster.n(ns))
        .get();
    return e == null ? List.of() : (List<String>) ((Map<String, Object>) e.getAdditionalProperties().get("spec"))
        .get("egressIPs");
  }

  private long leftToOpenShiftEvents(String ipam) {
    return client.v1().events().inAnyNamespace().list().getItems().stream()
        .filter(e -> ipam.equals(e.getInvolvedObject().getName()) && LEFT.equals(e.getReason())).count();
  }

  @Test
  void whereOpenShiftAttachesNoSecondaryAddressIsAddedAndTheStatusSaysWhy() throws InterruptedException {
    worker("a1", true);
    worker("a2", true);
    Ip foreign = foreignAddress();
    Ip expect = firstFree();
    assertThat(expect).isGreaterThan(foreign);
    String ipam = cluster.n("cncc");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).as("served, the address other resources use skipped")
          .isEqualTo(expect.toString());
      assertThat(egressIpAddresses("ns1")).containsExactly(expect.toString());
      assertThat(readyMessage(ipam)).contains("cloud attachment left to OpenShift")
          .contains(EgressAnnotations.CLOUD_EGRESS_IPCONFIG);
      assertThat(leftToOpenShiftEvents(ipam)).isEqualTo(1);
    });
    // the pass that wrote the status has applied its cloud changes: none, then or later
    assertThat(onEni("a1")).isEmpty();
    assertThat(onEni("a2")).isEmpty();
    cluster.namespace("ns2", ipam, null); // another pass
    await().atMost(WAIT).until(() -> cluster.egressIps("ns2") != null);
    Thread.sleep(2000);
    assertThat(onEni("a1")).isEmpty();
    assertThat(onEni("a2")).isEmpty();
    assertThat(client.v1().events().inAnyNamespace().list().getItems().stream()
        .filter(e -> ipam.equals(e.getInvolvedObject().getName()) && LEFT.equals(e.getReason()))
        .mapToInt(e -> e.getCount() == null ? 1 : e.getCount()).sum()).as("one Event, not one per pass").isEqualTo(1);

    // OpenShift's CNCC attaches where OVN placed the address (played here by hand), on an ENI that
    // still carries this controller's ownership tag for it (attached by an earlier version, before
    // OpenShift took over): this controller leaves it there in its passes and at the IPAM's deletion
    // (CNCC detaches once the EgressIP is gone); no call of ours moves or detaches it.
    String a2Eni = eniOf("a2").networkInterfaceId();
    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(a2Eni).privateIpAddresses(expect.toString()));
    ec2.createTags(r -> r.resources(a2Eni).tags(software.amazon.awssdk.services.ec2.model.Tag.builder()
        .key(org.ipamoperators.cloud.aws.Ec2NodeNetwork.OWNED_TAGS_PREFIX + "0").value(expect.toString()).build()));
    cluster.label("a2", "example.org/poke", "1"); // another pass
    Thread.sleep(2000);
    assertThat(onEni("a2")).containsExactly(expect.toString());
    client.resources(EgressIPAM.class).withName(ipam).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(client.resources(EgressIPAM.class).withName(ipam).get()).isNull();
      assertThat(egressIpAddresses("ns1")).isEmpty();
    });
    assertThat(onEni("a2")).containsExactly(expect.toString());
  }

  @Test
  void vanillaOvnOnAwsWithoutTheAnnotationIsAttachedByThisControllerAsBefore() {
    worker("a1", false);
    Ip foreign = foreignAddress();
    Ip expect = firstFree();
    assertThat(expect).isGreaterThan(foreign);
    String ipam = cluster.n("vanilla");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isEqualTo(expect.toString());
      assertThat(egressIpAddresses("ns1")).containsExactly(expect.toString());
      assertThat(onEni("a1")).containsExactly(expect.toString());
      assertThat(readyMessage(ipam)).isNotEmpty().doesNotContain("left to OpenShift");
    });
    assertThat(leftToOpenShiftEvents(ipam)).isZero();
  }
}
