package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.cloud.aws.Ec2NodeNetworkProvider;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.egressip.EgressIPAMReconciler;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.cloud.CloudNodeNetworks;
import org.ipamoperators.egressip.cloud.CloudSettings;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.testsupport.moto.FaultProxy;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;

/**
 * EgressIPAM on AWS: the real apiserver, OpenShift SDN's objects, an Infrastructure that says AWS,
 * the old credentials Secret, and moto's EC2 behind the real SDK. One subnet per zone, one CIDR per
 * subnet (zone-per-CIDR), several instances per zone. Addresses are data only.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.INFRASTRUCTURE})
@MotoTest
class AwsEgressIT {
  private static final Duration WAIT = Duration.ofSeconds(40);
  private static final String ZONE = "topology.kubernetes.io/zone";
  private static final Map<String, String> WORKERS = Map.of("node-role.kubernetes.io/worker", "");
  private static final String CIDR_A = "198.51.100.0/26";
  private static final String CIDR_B = "198.51.100.64/26";
  private Operator operator;
  private EgressIPAMReconciler reconciler;
  private io.micrometer.core.instrument.simple.SimpleMeterRegistry registry;
  private FaultProxy proxy;
  private EgressCluster cluster;
  private KubernetesClient client;
  private Ec2Client ec2;
  private String subnetA;
  private String subnetB;
  private String operatorNs;
  private final Map<String, String> instances = new HashMap<>();

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client, MotoServer moto, Ec2Client ec2, TestInfo info)
      throws java.io.IOException {
    this.client = client;
    this.ec2 = ec2;
    cluster = new EgressCluster(client, EgressCluster.prefix(info), true);
    String vpc = ec2.createVpc(r -> r.cidrBlock("198.51.100.0/24")).vpc().vpcId();
    subnetA = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock(CIDR_A).availabilityZone("us-east-1a")).subnet().subnetId();
    subnetB = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock(CIDR_B).availabilityZone("us-east-1b")).subnet().subnetId();
    infrastructure("AWS", "us-east-1");
    // The old operator's Secret, in the operator's namespace: static keys (moto takes any).
    operatorNs = cluster.n("op");
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(operatorNs).endMetadata().build())
        .create();
    client.secrets().inNamespace(operatorNs).resource(new SecretBuilder().withNewMetadata()
        .withName(Ec2NodeNetworkProvider.CREDENTIALS_SECRET).endMetadata()
        .addToStringData("aws_access_key_id", "test").addToStringData("aws_secret_access_key", "test").build())
        .create();
    // The operator reaches moto through a fault-injecting proxy (no faults unless a test asks).
    proxy = new FaultProxy(moto.endpoint());
    KubernetesClient c = server.newClient();
    operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
    registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    reconciler = new EgressIPAMReconciler(c, Clock.systemUTC(), registry,
        new CloudNodeNetworks(c, new CloudSettings(Map.of("aws.endpoint", proxy.endpoint().toString()), operatorNs, null)));
    operator.register(reconciler);
    operator.start();
  }

  @AfterEach
  void stop() {
    if (operator != null) {
      operator.stop();
    }
    proxy.close();
    cluster.close();
    client.namespaces().withName(operatorNs).delete();
    client.genericKubernetesResources("config.openshift.io/v1", "Infrastructure").withName("cluster").delete();
  }

  private void infrastructure(String type, String region) {
    var infras = client.genericKubernetesResources("config.openshift.io/v1", "Infrastructure");
    infras.resource(new GenericKubernetesResourceBuilder().withApiVersion("config.openshift.io/v1")
        .withKind("Infrastructure").withNewMetadata().withName("cluster").endMetadata()
        .addToAdditionalProperties("spec", Map.of()).build()).create();
    var current = infras.withName("cluster").get();
    current.setAdditionalProperty("status", Map.of("platform", type,
        "platformStatus", Map.of("type", type, "aws", Map.of("region", region))));
    infras.resource(current).updateStatus();
  }

  /** An EC2 instance and its Node, labelled with its zone and instance type. */
  private void worker(String name, String zone, String subnet, String type) {
    Instance i = ec2.runInstances(r -> r.imageId("ami-12c6146b").instanceType(type).subnetId(subnet)
        .minCount(1).maxCount(1)).instances().get(0);
    instances.put(name, i.instanceId());
    cluster.cloudNode(name, Map.of(ZONE, zone, "node.kubernetes.io/instance-type", type),
        "aws:///" + i.placement().availabilityZone() + "/" + i.instanceId(), i.privateIpAddress());
  }

  private NetworkInterface eniOf(String node) {
    return Enis.primary(ec2, instances.get(node));
  }

  /** The secondary addresses on the node's device-index-0 ENI. */
  private Set<String> onEni(String node) {
    return Enis.secondaryAddresses(ec2, instances.get(node));
  }

  private Set<String> ownedTags(String node) {
    Set<String> out = new TreeSet<>();
    org.ipamoperators.cloud.aws.Ec2NodeNetwork.ownedTags(eniOf(node).tagSet()).forEach(ip -> out.add(ip.toString()));
    return out;
  }

  /** Every address any ENI of the subnet holds, asked of EC2 directly. */
  private Set<Ip> usedIn(String subnet) {
    Set<Ip> out = new TreeSet<>();
    ec2.describeNetworkInterfaces(r -> r.filters(f -> f.name("subnet-id").values(subnet))).networkInterfaces()
        .forEach(n -> n.privateIpAddresses().forEach(a -> out.add(Ip.parse(a.privateIpAddress()))));
    return out;
  }

  /** The lowest address of the CIDR that is neither AWS-reserved nor on any ENI. */
  private Ip firstFree(String cidr, Set<Ip> used) {
    IpRange r = IpRange.parse(cidr);
    Ip ip = r.first().next().next().next().next();
    while (used.contains(ip)) {
      ip = ip.next();
    }
    return ip;
  }

  private EgressIPAM ipam(String name) {
    return client.resources(EgressIPAM.class).withName(name).get();
  }

  private String readyMessage(String ipam) {
    EgressIPAM x = ipam(ipam);
    return x == null || x.getStatus() == null || x.getStatus().conditions() == null ? "" : x.getStatus().conditions()
        .stream().filter(c -> "Ready".equals(c.getType())).map(c -> c.getMessage()).findFirst().orElse("");
  }

  @Test
  void zonePerCidrSkipsUsedAndReservedAddressesAndPlacesByCapacity() {
    worker("a1", "a", subnetA, "t3.micro"); // one secondary slot, taken below by another tool
    worker("a2", "a", subnetA, "m5.large");
    worker("b1", "b", subnetB, "m5.large");
    worker("b2", "b", subnetB, "m5.large");
    String foreignEni = ec2.createNetworkInterface(r -> r.subnetId(subnetA)).networkInterface().networkInterfaceId();
    String a1Primary = eniOf("a1").privateIpAddress();
    Ip next = Ip.parse(eniOf("a2").privateIpAddress()).next();
    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(foreignEni).privateIpAddresses(next.toString()));
    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(eniOf("a1").networkInterfaceId())
        .privateIpAddresses(next.next().toString()));
    Ip expectA = firstFree(CIDR_A, usedIn(subnetA));
    Ip expectB = firstFree(CIDR_B, usedIn(subnetB));
    assertThat(expectA).as("the used addresses come first in the subnet").isGreaterThan(next.next());

    String ipam = cluster.n("aws");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"), cidr(CIDR_B, "b"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isEqualTo(expectA + "," + expectB);
      assertThat(onEni("a2")).containsExactly(expectA.toString());
      assertThat(ownedTags("a2")).containsExactly(expectA.toString());
      assertThat(onEni("a1")).as("another tool's address stays, and a1 has no room for ours")
          .containsExactly(next.next().toString());
      assertThat(onEni("b1").size() + onEni("b2").size()).isEqualTo(1);
      assertThat(cluster.hostSubnetIps("a2")).containsExactly(expectA.toString());
      assertThat(EgressCluster.condition(ipam(ipam), "Ready")).as(readyMessage(ipam)).isEqualTo("True");
      assertThat(readyMessage(ipam)).isEqualTo("platform AWS served by NodeNetwork provider aws");
    });

    cluster.namespace("ns2", ipam, null);
    cluster.namespace("ns3", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(onEni("a2")).hasSize(3); // a1 is full: every zone-a address on a2
      assertThat(onEni("a1")).containsExactly(next.next().toString());
      assertThat(List.of(onEni("b1").size(), onEni("b2").size())).containsExactlyInAnyOrder(1, 2);
      assertThat(EgressCluster.condition(ipam(ipam), "Ready")).as(readyMessage(ipam)).isEqualTo("True");
    });
    // A reconcile with nothing to change reads EC2 but changes nothing on it. Two reconciles are
    // triggered; the IPAM's reconciles run one at a time, so the first has finished when the
    // second starts reading.
    int mark = proxy.forwarded().size();
    cluster.label("b2", "example.org/unrelated", "1");
    await().atMost(WAIT).until(() -> proxy.forwarded().subList(mark, proxy.forwarded().size()).stream()
        .filter("DescribeInstances"::equals).count() >= 4); // the four nodes described
    int second = proxy.forwarded().size();
    cluster.label("b2", "example.org/unrelated", "2");
    await().atMost(WAIT).until(() -> proxy.forwarded().subList(second, proxy.forwarded().size())
        .contains("DescribeInstances"));
    List<String> all = proxy.forwarded();
    int end = second;
    while (!"DescribeInstances".equals(all.get(end))) {
      end++; // the first reconcile's tail (its apply) runs until the second one starts describing
    }
    List<String> steady = all.subList(mark, end);
    assertThat(steady).doesNotContain("AssignPrivateIpAddresses", "UnassignPrivateIpAddresses", "CreateTags",
        "DeleteTags");
    // the account's subnets are described once per cache period, not on every reconcile (review H5)
    assertThat(steady).doesNotContain("DescribeSubnets");
    Map<String, Long> perCall = new java.util.TreeMap<>();
    steady.forEach(call -> perCall.merge(call, 1L, Long::sum));
    org.slf4j.LoggerFactory.getLogger(AwsEgressIT.class).info("EC2 calls of one no-op reconcile, 4 nodes, 2 CIDRs: {}",
        perCall);
    // nothing allocated is in use by anything else or reserved
    Set<String> ours = new TreeSet<>();
    for (String ns : List.of("ns1", "ns2", "ns3")) {
      ours.addAll(List.of(cluster.egressIps(ns).split(",")));
    }
    assertThat(ours).hasSize(6).doesNotContain(next.toString(), next.next().toString(), a1Primary,
        "198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.63", "198.51.100.65", "198.51.100.127");
  }

  @Test
  void aZoneWhoseNodesAreAtTheirEniLimitKeepsTheAddressUnplacedAndTheOtherZoneIsServed() {
    // scenario 40: the only zone-a node is a t3.micro whose one secondary slot another tool holds
    worker("a1", "a", subnetA, "t3.micro");
    worker("b1", "b", subnetB, "m5.large");
    String foreign = Ip.parse(eniOf("a1").privateIpAddress()).next().next().next().toString();
    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(eniOf("a1").networkInterfaceId())
        .privateIpAddresses(foreign));
    String ipam = cluster.n("full");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"), cidr(CIDR_B, "b"));
    cluster.namespace("ns1", ipam, null);

    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isNotNull();
      String[] ips = cluster.egressIps("ns1").split(",");
      assertThat(onEni("b1")).containsExactly(ips[1]);
      assertThat(onEni("a1")).containsExactly(foreign); // nothing forced past the ENI limit
      EgressIPAM x = ipam(ipam);
      assertThat(x.getStatus()).isNotNull();
      assertThat(x.getStatus().unplaceableIPs()).isEqualTo(1);
      assertThat(EgressCluster.condition(x, "Degraded")).isEqualTo("True");
      assertThat(client.v1().events().inNamespace(cluster.n("ns1")).list().getItems())
          .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("EgressIPUnplaceable"));
    });
  }

  @Test
  void addressesFailOverWhenANodeGoesNotReadyAndWhenItsInstanceIsTerminated() {
    worker("a1", "a", subnetA, "m5.large");
    worker("a2", "a", subnetA, "m5.large");
    worker("a3", "a", subnetA, "m5.large");
    String ipam = cluster.n("fo");
    cluster.ipam(ipam, ZONE, WORKERS, null, 1, cidr(CIDR_A, "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.egressIps("ns1")).isNotNull());
    String ip = cluster.egressIps("ns1");
    await().atMost(WAIT).untilAsserted(() -> assertThat(onEni("a1")).containsExactly(ip)); // ties by name

    cluster.setReady("a1", false);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(onEni("a1")).isEmpty();
      assertThat(onEni("a2")).containsExactly(ip);
      assertThat(ownedTags("a1")).isEmpty();
      assertThat(cluster.hostSubnetIps("a2")).containsExactly(ip);
    });

    ec2.terminateInstances(r -> r.instanceIds(instances.get("a2")));
    cluster.setReady("a2", false);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(onEni("a3")).containsExactly(ip);
      assertThat(cluster.hostSubnetIps("a3")).containsExactly(ip);
      assertThat(readyMessage(ipam)).contains("InstanceTerminated", cluster.n("a2"));
      assertThat(client.v1().events().inAnyNamespace().list().getItems()).anySatisfy(e -> {
        assertThat(e.getInvolvedObject().getName()).isEqualTo(ipam);
        assertThat(e.getReason()).isEqualTo("CloudCallFailed");
        assertThat(e.getMessage()).contains("DescribeInstances", "InstanceTerminated", instances.get("a2"));
      });
    });
    assertThat(cluster.egressIps("ns1")).isEqualTo(ip); // the namespace's address never changed
  }

  /**
   * A namespace opts out while its node's instance cannot be described (throttled past the SDK's
   * retries): the address may still be on the node's ENI, so its claim is kept until the node can be
   * read again, and then the address is taken off and released. Released at once, it stayed on the
   * ENI with no owner: the planner only takes off addresses that it claims.
   */
  @Test
  void anAddressIsNotReleasedWhileItsNodeCannotBeDescribed() {
    worker("a1", "a", subnetA, "m5.large");
    String ipam = cluster.n("undescribed");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(onEni("a1")).hasSize(1));
    String ip = onEni("a1").iterator().next();
    proxy.inject("DescribeInstances", instances.get("a1"), FaultProxy.Fault.THROTTLE, 40);
    cluster.annotate("ns1", org.ipamoperators.egressip.api.EgressAnnotations.EGRESSIPAM, null);

    await().atMost(Duration.ofSeconds(150)).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isNull();
      assertThat(onEni("a1")).as("taken off once a1 can be described").isEmpty();
      assertThat(ownedTags("a1")).isEmpty();
      assertThat(new org.ipamoperators.controller.common.ledger.BlockLedger(client).entry(Ip.parse(ip)))
          .as("released after it was taken off").isNull();
    });
    assertThat(proxy.allFaultsUsed()).as("a1 was described again after the faults").isTrue();
  }

  /**
   * Seeded EC2 faults (throttling, 503 and 500 on the calls the operator makes, beyond the SDK's own
   * retries) while twelve namespaces opt in, four opt out and a node fails. Once the faults are used
   * up: every namespace left has one address per CIDR, each on exactly one ENI (of a Ready node, in
   * its zone) and in that node's HostSubnet, tagged as ours (a stale tag may stay after a failed
   * DeleteTags); no address is on an ENI that no namespace
   * holds; no address has two namespaces. {@code -Dipam.reliability.seed=N} replays the faults drawn.
   */
  @Test
  void seededCloudFaultsDuringABurstLeaveEveryAddressOnExactlyOneEni() {
    // About 2-3 minutes: in the long run only (-Dipam.reliability.long=true), like the other seeded runs.
    org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.getBoolean("ipam.reliability.long"),
        "the seeded cloud-fault run runs with -Dipam.reliability.long=true");
    long seed = Long.getLong("ipam.reliability.seed", System.nanoTime());
    org.slf4j.LoggerFactory.getLogger(AwsEgressIT.class).info("[cloud-faults] aws seed {}", seed);
    java.util.Random random = new java.util.Random(seed);
    List<String> nodes = List.of("a1", "a2", "b1", "b2");
    nodes.forEach(n -> worker(n, n.substring(0, 1), n.startsWith("a") ? subnetA : subnetB, "m5.large"));
    List<String> calls = List.of("AssignPrivateIpAddresses", "UnassignPrivateIpAddresses", "DescribeNetworkInterfaces",
        "DescribeInstances", "CreateTags", "DeleteTags");
    FaultProxy.Fault[] kinds = FaultProxy.Fault.values();
    Runnable someFaults = () -> {
      for (int i = 0; i < 4; i++) {
        proxy.inject(calls.get(random.nextInt(calls.size())), null, kinds[random.nextInt(kinds.length)],
            1 + random.nextInt(12));
      }
    };
    String ipam = cluster.n("cf");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"), cidr(CIDR_B, "b"));
    someFaults.run();
    for (int i = 0; i < 12; i++) {
      cluster.namespace("ns" + i, ipam, null);
    }
    await().atMost(WAIT).until(() -> cluster.egressIps("ns0") != null);
    someFaults.run();
    for (int i = 0; i < 4; i++) {
      cluster.annotate("ns" + i, org.ipamoperators.egressip.api.EgressAnnotations.EGRESSIPAM, null);
    }
    cluster.setReady("a1", false);
    someFaults.run();

    await().atMost(Duration.ofSeconds(180)).untilAsserted(() -> {
      Map<String, String> holder = new HashMap<>();
      for (int i = 4; i < 12; i++) {
        String ips = cluster.egressIps("ns" + i);
        assertThat(ips).as("ns%d", i).isNotNull();
        String[] two = ips.split(",");
        assertThat(two).hasSize(2);
        assertThat(IpRange.parse(CIDR_A).contains(Ip.parse(two[0]))).isTrue();
        assertThat(IpRange.parse(CIDR_B).contains(Ip.parse(two[1]))).isTrue();
        for (String ip : two) {
          assertThat(holder.put(ip, "ns" + i)).as("%s has two namespaces", ip).isNull();
        }
      }
      for (int i = 0; i < 4; i++) {
        assertThat(cluster.egressIps("ns" + i)).as("ns%d opted out", i).isNull();
      }
      Map<String, List<String>> onEnis = new HashMap<>();
      for (String n : nodes) {
        // every address of ours on the ENI is listed in its tags; a tag left over from a failed DeleteTags
        // grants nothing (Ec2NodeNetwork owns only what is both on the ENI and tagged)
        assertThat(ownedTags(n)).as("tags of %s", n).containsAll(onEni(n));
        onEni(n).forEach(ip -> onEnis.computeIfAbsent(ip, k -> new java.util.ArrayList<>()).add(n));
      }
      Map<String, Set<String>> tags = new java.util.TreeMap<>();
      nodes.forEach(n -> tags.put(n, ownedTags(n)));
      Map<String, String> ledger = new java.util.TreeMap<>();
      var blocks = new org.ipamoperators.controller.common.ledger.BlockLedger(client);
      onEnis.keySet().stream().filter(ip -> !holder.containsKey(ip)).forEach(ip -> {
        var e = blocks.entry(Ip.parse(ip));
        ledger.put(ip, e == null ? "unclaimed" : e.owner().name());
      });
      assertThat(onEnis.keySet()).as("on an ENI, and only those (ENIs %s, tags %s, ledger of the others %s)", onEnis,
          tags, ledger).isEqualTo(holder.keySet());
      Map<String, List<String>> hosted = cluster.hostedAnywhere();
      for (var e : onEnis.entrySet()) {
        assertThat(e.getValue()).as("ENIs holding %s", e.getKey()).hasSize(1).doesNotContain("a1");
        assertThat(hosted.get(e.getKey())).as("HostSubnets of %s", e.getKey()).containsExactly(cluster.n(e.getValue().get(0)));
      }
      assertThat(EgressCluster.condition(ipam(ipam), "Ready")).as(readyMessage(ipam)).isEqualTo("True");
    });
    Map<String, Long> byCall = new java.util.TreeMap<>();
    proxy.injected().forEach(f -> byCall.merge(f, 1L, Long::sum));
    org.slf4j.LoggerFactory.getLogger(AwsEgressIT.class).info("[cloud-faults] aws seed {}: {} faults injected {}",
        seed, proxy.injected().size(), byCall);
    assertThat(proxy.injected()).as("faults reached the operator").isNotEmpty();
  }

  @Test
  void throttlingPastTheSdksRetriesIsReportedAndTheNextReconcileFinishesTheWork() {
    worker("a1", "a", subnetA, "m5.large");
    worker("b1", "b", subnetB, "m5.large");
    String a1Eni = eniOf("a1").networkInterfaceId();
    // 8 attempts per call: the first reconcile's assign on a1 gives up, a later one gets through
    proxy.inject("AssignPrivateIpAddresses", a1Eni, FaultProxy.Fault.THROTTLE, 10)
        .inject("DescribeNetworkInterfaces", null, FaultProxy.Fault.UNAVAILABLE, 3);
    String ipam = cluster.n("thr");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"), cidr(CIDR_B, "b"));
    cluster.namespace("ns1", ipam, null);

    await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isNotNull();
      String[] ips = cluster.egressIps("ns1").split(",");
      assertThat(onEni("a1")).containsExactly(ips[0]);
      assertThat(onEni("b1")).containsExactly(ips[1]);
      assertThat(EgressCluster.condition(ipam(ipam), "Ready")).as(readyMessage(ipam)).isEqualTo("True");
    });
    assertThat(proxy.allFaultsUsed()).isTrue();
    assertThat(client.v1().events().inAnyNamespace().list().getItems()).anySatisfy(e -> {
      assertThat(e.getReason()).isEqualTo("CloudCallFailed");
      assertThat(e.getMessage()).contains("AssignPrivateIpAddresses", a1Eni, cluster.n("a1"), "RequestLimitExceeded");
    });
  }

  @Test
  void nothingIsClaimedInACidrWhoseAddressesInUseCannotBeDiscoveredUntilTheyCan() {
    worker("a1", "a", subnetA, "m5.large");
    worker("b1", "b", subnetB, "m5.large");
    String ipam = cluster.n("blind");
    String cidrC = "198.51.100.128/26"; // no subnet yet: discovery fails with NoSubnetForCidr
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"), cidr(cidrC, "c"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(readyMessage(ipam)).contains("NoSubnetForCidr", cidrC);
      assertThat(client.v1().events().inNamespace(cluster.n("ns1")).list().getItems())
          .anySatisfy(e -> assertThat(e.getMessage()).contains("could not be discovered"));
    });
    assertThat(cluster.egressIps("ns1")).isNull();
    assertThat(Ledgers.ofPool(client, "egressipam/" + ipam)).isEmpty();

    // The subnet appears (with an instance in it): the next attempt allocates, skipping what is used.
    String vpc = ec2.describeSubnets(r -> r.subnetIds(subnetA)).subnets().get(0).vpcId();
    String subnetC = ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock(cidrC).availabilityZone("us-east-1c")).subnet()
        .subnetId();
    worker("c1", "c", subnetC, "m5.large");
    String c1Ip = eniOf("c1").privateIpAddress();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isNotNull();
      String[] ips = cluster.egressIps("ns1").split(",");
      assertThat(ips[1]).isNotIn(c1Ip, "198.51.100.128", "198.51.100.129", "198.51.100.130", "198.51.100.131");
      assertThat(onEni("c1")).containsExactly(ips[1]);
      assertThat(EgressCluster.condition(ipam(ipam), "Ready")).as(readyMessage(ipam)).isEqualTo("True");
    });
  }

  @Test
  void addressesTheOldOperatorAttachedAreTakenOverWhereTheyAre() {
    // migration: the old operator left its annotation and an untagged secondary address on a2's ENI
    worker("a1", "a", subnetA, "m5.large");
    worker("a2", "a", subnetA, "m5.large");
    String old = "198.51.100.40";
    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(eniOf("a2").networkInterfaceId()).privateIpAddresses(old));
    String ipam = cluster.n("mig");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"));
    cluster.namespace("ns1", ipam, old);

    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(Ledgers.holder(client, Ip.parse(old))).isPresent();
      assertThat(onEni("a2")).containsExactly(old);
      assertThat(ownedTags("a2")).containsExactly(old); // adopted where it is: no move
      assertThat(onEni("a1")).isEmpty();
      assertThat(cluster.hostSubnetIps("a2")).containsExactly(old);
      assertThat(EgressCluster.condition(ipam(ipam), "Ready")).as(readyMessage(ipam)).isEqualTo("True");
    });
    assertThat(cluster.egressIps("ns1")).isEqualTo(old);
  }

  /**
   * Issue 14: an earlier version left a secondary address on a1's ENI, listed in the ownership tags,
   * with no claim. After the grace (here 6 s and two passes) it is taken off and its tag removed, with
   * an Event and a count; a tagged address someone claims, an untagged one, a tagged one outside the
   * IPAM's CIDR and the namespace's own address stay.
   */
  @Test
  void anOrphanMarkedOursWithNoClaimIsTakenOffAfterTheGraceAndNothingElse() {
    Duration grace = Duration.ofSeconds(6);
    reconciler.orphanGrace(grace, 2);
    worker("a1", "a", subnetA, "m5.large");
    String orphan = "198.51.100.50";
    String claimed = "198.51.100.51";
    String unmarked = "198.51.100.52";
    String outside = "198.51.100.10";
    String eni = eniOf("a1").networkInterfaceId();
    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(eni).privateIpAddresses(orphan, claimed, unmarked, outside));
    ec2.createTags(r -> r.resources(eni).tags(t -> t.key(
        org.ipamoperators.cloud.aws.Ec2NodeNetwork.OWNED_TAGS_PREFIX + "0").value(orphan + " " + claimed + " " + outside)));
    new ClusterLedger(client).claim(Ip.parse(claimed), "vip/other",
        new org.ipamoperators.controller.common.ledger.ClaimOwner("vip", "Service", "default", "web", null));
    String ipam = cluster.n("orph");
    long start = System.nanoTime();
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr("198.51.100.32/27", "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isNotNull();
      assertThat(onEni("a1")).contains(cluster.egressIps("ns1"));
    });
    // served, and within the grace the orphan is still there
    if (System.nanoTime() - start < grace.minusSeconds(1).toNanos()) {
      assertThat(onEni("a1")).contains(orphan);
    }
    await().atMost(WAIT).untilAsserted(() -> assertThat(onEni("a1")).doesNotContain(orphan));
    assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not before the grace").isGreaterThanOrEqualTo(grace);
    String own = cluster.egressIps("ns1");
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(onEni("a1")).containsExactlyInAnyOrder(own, claimed, unmarked, outside);
      assertThat(ownedTags("a1")).doesNotContain(orphan).contains(own, claimed, outside);
      assertThat(client.v1().events().inAnyNamespace().list().getItems()).anySatisfy(e -> {
        assertThat(e.getInvolvedObject().getName()).isEqualTo(ipam);
        assertThat(e.getReason()).isEqualTo("OrphanTakenOff");
        assertThat(e.getMessage()).contains(orphan, cluster.n("a1"), "claimed by nobody");
      });
      assertThat(registry.get("ipam_egressip_orphans_taken_off").tag("egressipam", ipam).counter().count()).isEqualTo(1.0);
    });
    // and it stays so: the others are never taken off
    cluster.label("a1", "example.org/unrelated", "1");
    await().during(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(onEni("a1")).containsExactlyInAnyOrder(own, claimed, unmarked, outside));
    assertThat(registry.get("ipam_egressip_orphans_taken_off").tag("egressipam", ipam).counter().count()).isEqualTo(1.0);
  }

  /**
   * The operator's cache lags (its watches silenced by a proxy in front of the API server) when another owner
   * claims an address that sits on a node's interface, marked ours and claimed by nobody so far: to the operator
   * it stays an orphan and falls due after the grace, but the ledger read from the API server before the detach
   * shows the claim, so the address stays on, with no Event and no count.
   */
  @Test
  void anOrphanClaimedWhileTheCacheLagsIsLeftOn(KubeApiServer server) throws Exception {
    operator.stop();
    operator = null;
    try (org.ipamoperators.testsupport.kube.ApiFaultProxy api =
        new org.ipamoperators.testsupport.kube.ApiFaultProxy(server, 1L)) {
      KubernetesClient c = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
          .withConfig(io.fabric8.kubernetes.client.Config.fromKubeconfig(api.kubeconfig())).build();
      Operator lagging = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
      var counts = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
      EgressIPAMReconciler r = new EgressIPAMReconciler(c, Clock.systemUTC(), counts,
          new CloudNodeNetworks(c, new CloudSettings(Map.of("aws.endpoint", proxy.endpoint().toString()), operatorNs,
              null)));
      Duration grace = Duration.ofSeconds(6);
      r.orphanGrace(grace, 2);
      lagging.register(r);
      lagging.start();
      try {
        worker("a1", "a", subnetA, "m5.large");
        String candidate = "198.51.100.50";
        String eni = eniOf("a1").networkInterfaceId();
        ec2.assignPrivateIpAddresses(x -> x.networkInterfaceId(eni).privateIpAddresses(candidate));
        ec2.createTags(x -> x.resources(eni).tags(t -> t.key(
            org.ipamoperators.cloud.aws.Ec2NodeNetwork.OWNED_TAGS_PREFIX + "0").value(candidate)));
        String ipam = cluster.n("lag");
        cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr("198.51.100.32/27", "a"));
        cluster.namespace("ns1", ipam, null);
        await().atMost(WAIT).untilAsserted(() -> {
          assertThat(cluster.egressIps("ns1")).isNotNull().isNotEqualTo(candidate);
          assertThat(onEni("a1")).contains(cluster.egressIps("ns1"));
        });
        api.silenceWatches(true);
        new ClusterLedger(client).claim(Ip.parse(candidate), "vip/other",
            new org.ipamoperators.controller.common.ledger.ClaimOwner("vip", "Service", "default", "late", null));
        // The grace (6 s, two passes) runs out while the cache still shows no claim; passes keep coming
        // (rescheduled while an orphan is watched).
        await().during(Duration.ofSeconds(20)).atMost(Duration.ofSeconds(25)).untilAsserted(() -> {
          assertThat(onEni("a1")).contains(candidate);
          assertThat(ownedTags("a1")).contains(candidate);
        });
        assertThat(counts.find("ipam_egressip_orphans_taken_off").counters()).allSatisfy(x ->
            assertThat(x.count()).isZero());
        assertThat(client.v1().events().inAnyNamespace().list().getItems())
            .noneMatch(e -> "OrphanTakenOff".equals(e.getReason()) && e.getMessage().contains(candidate));
      } finally {
        api.silenceWatches(false);
        lagging.stop();
      }
    }
  }

  @Test
  void namespaceAndIpamDeletionReleaseExactlyWhatWasAttached() {
    worker("a1", "a", subnetA, "m5.large");
    worker("b1", "b", subnetB, "m5.large");
    String foreign = Ip.parse(eniOf("a1").privateIpAddress()).next().next().next().next().next().toString();
    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(eniOf("a1").networkInterfaceId())
        .privateIpAddresses(foreign));
    String ipam = cluster.n("del");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"), cidr(CIDR_B, "b"));
    cluster.namespace("ns1", ipam, null);
    cluster.namespace("ns2", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isNotNull();
      assertThat(cluster.egressIps("ns2")).isNotNull();
      assertThat(onEni("a1")).hasSize(3);
      assertThat(onEni("b1")).hasSize(2);
    });
    String[] ns1 = cluster.egressIps("ns1").split(",");
    String[] ns2 = cluster.egressIps("ns2").split(",");

    client.namespaces().withName(cluster.n("ns1")).delete(); // Terminating: no namespace controller here
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(onEni("a1")).containsExactlyInAnyOrder(foreign, ns2[0]);
      assertThat(onEni("b1")).containsExactly(ns2[1]);
      assertThat(Ledgers.holder(client, Ip.parse(ns1[0]))).isEmpty();
      assertThat(Ledgers.holder(client, Ip.parse(ns1[1]))).isEmpty();
    });

    client.resources(EgressIPAM.class).withName(ipam).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(ipam(ipam)).isNull();
      assertThat(onEni("a1")).as("another tool's address is never taken").containsExactly(foreign);
      assertThat(onEni("b1")).isEmpty();
      assertThat(ownedTags("a1")).isEmpty();
      assertThat(Ledgers.ofPool(client, "egressipam/" + ipam)).isEmpty();
    });
  }
}
