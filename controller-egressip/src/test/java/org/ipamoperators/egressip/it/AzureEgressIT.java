package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import com.azure.core.credential.AccessToken;
import com.azure.core.http.jdk.httpclient.JdkHttpClientBuilder;
import com.azure.resourcemanager.resources.fluentcore.utils.ResourceManagerUtils;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.cloud.azure.AzureContext;
import org.ipamoperators.cloud.azure.AzureNodeNetwork;
import org.ipamoperators.cloud.azure.AzureNodeNetworkProvider;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.EgressIPAMReconciler;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.cloud.CloudNodeNetworks;
import org.ipamoperators.egressip.cloud.CloudSettings;
import org.ipamoperators.testsupport.arm.ArmServer;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import reactor.core.publisher.Mono;

/**
 * EgressIPAM on Azure: the real apiserver, OpenShift SDN's objects, an Infrastructure that says
 * Azure (resource groups), the old credentials Secret (subscription), and the ARM server behind
 * the real Azure SDK over TLS. One subnet per zone, one CIDR per subnet. Addresses are data only.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.INFRASTRUCTURE})
class AzureEgressIT {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String SUB = "00000000-0000-0000-0000-0000000000e1";
  private static final String ZONE = "topology.kubernetes.io/zone";
  private static final Map<String, String> WORKERS = Map.of("node-role.kubernetes.io/worker", "");
  private static final String CIDR_A = "198.51.100.0/26";
  private static final String CIDR_B = "198.51.100.64/26";
  private Operator operator;
  private EgressIPAMReconciler reconciler;
  private io.micrometer.core.instrument.simple.SimpleMeterRegistry registry;
  private ArmServer arm;
  private EgressCluster cluster;
  private KubernetesClient client;
  private String subnetA;
  private String subnetB;
  private String pool;
  private String lb;
  private String operatorNs;
  private KubeApiServer server;
  private final Map<String, String> vms = new HashMap<>();

  @BeforeAll
  static void fastPolls() {
    ResourceManagerUtils.InternalRuntimeContext.setDelayProvider(d -> Duration.ofMillis(5));
  }

  @BeforeEach
  void start(KubeApiServer server, KubernetesClient client, TestInfo info) {
    this.client = client;
    cluster = new EgressCluster(client, "az" + EgressCluster.prefix(info), true); // AwsEgressIT has tests of the same names
    arm = new ArmServer(SUB, "eastus");
    String vnet = arm.vnet("net-rg", "vnet1", "198.51.100.0/24");
    subnetA = arm.subnet(vnet, "worker-a", CIDR_A);
    subnetB = arm.subnet(vnet, "worker-b", CIDR_B);
    lb = arm.loadBalancer("cluster-rg", "lb1", List.of("pool1"), List.of());
    pool = lb + "/backendAddressPools/pool1";
    infrastructure();
    operatorNs = cluster.n("op");
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(operatorNs).endMetadata().build())
        .create();
    client.secrets().inNamespace(operatorNs).resource(new SecretBuilder().withNewMetadata()
        .withName(AzureNodeNetworkProvider.CREDENTIALS_SECRET).endMetadata()
        .addToStringData("azure_subscription_id", SUB).addToStringData("azure_tenant_id", "t")
        .addToStringData("azure_client_id", "c").addToStringData("azure_client_secret", "s").build()).create();
    this.server = server;
    startOperator();
  }

  /** An operator with a fresh Azure network (as after a restart: nothing known of the NICs). */
  private void startOperator() {
    KubernetesClient c = server.newClient();
    // The operator's Azure network through the provider, as in production: resource groups from
    // Infrastructure, the subscription from the Secret, the endpoint setting; only how the network is
    // built differs: the ARM server's certificate trusted and a test token instead of the Secret's
    // service principal (nothing leaves 127.0.0.1).
    AzureNodeNetworkProvider provider = new AzureNodeNetworkProvider(s -> AzureNodeNetwork.create(
        s.withIpConfigurationsPerNic(4).withRetries(4, Duration.ofMillis(50), Duration.ofMillis(400)),
        r -> Mono.just(new AccessToken("it-token", OffsetDateTime.now().plusHours(1))),
        new JdkHttpClientBuilder(java.net.http.HttpClient.newBuilder().sslContext(arm.clientSslContext())).build(),
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
    CloudSettings settings = new CloudSettings(Map.of(AzureContext.SETTING_ENDPOINT, arm.endpoint().toString()),
        operatorNs, null);
    operator = new Operator(o -> o.withKubernetesClient(c).withCloseClientOnStop(true));
    registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    reconciler = new EgressIPAMReconciler(c, Clock.systemUTC(), registry,
        new CloudNodeNetworks(List.of(provider), settings, CloudNodeNetworks.clusterSecrets(c, settings)));
    operator.register(reconciler);
    operator.start();
  }

  @AfterEach
  void stop() {
    operator.stop();
    arm.close();
    cluster.close();
    client.namespaces().withName(operatorNs).delete();
    client.genericKubernetesResources("config.openshift.io/v1", "Infrastructure").withName("cluster").delete();
  }

  private void infrastructure() {
    var infras = client.genericKubernetesResources("config.openshift.io/v1", "Infrastructure");
    infras.resource(new GenericKubernetesResourceBuilder().withApiVersion("config.openshift.io/v1")
        .withKind("Infrastructure").withNewMetadata().withName("cluster").endMetadata()
        .addToAdditionalProperties("spec", Map.of()).build()).create();
    var current = infras.withName("cluster").get();
    current.setAdditionalProperty("status", Map.of("platform", "Azure", "platformStatus", Map.of("type", "Azure",
        "azure", Map.of("resourceGroupName", "cluster-rg", "networkResourceGroupName", "net-rg",
            "cloudName", "AzurePublicCloud"))));
    infras.resource(current).updateStatus();
  }

  /** A VM (its NIC in the zone's subnet and the LB pool) and its Node. */
  private void worker(String name, String zone, String subnet) {
    String vm = arm.vm("cluster-rg", cluster.n(name), subnet, null, List.of(pool));
    vms.put(name, vm);
    String primary = arm.ipConfigurations(arm.primaryNicId(vm)).get(0).path("properties").path("privateIPAddress")
        .asText();
    cluster.cloudNode(name, Map.of(ZONE, zone), "azure://" + vm, primary);
  }

  private Set<String> onNic(String node) {
    return new TreeSet<>(arm.secondaryAddresses(arm.primaryNicId(vms.get(node))).values());
  }

  private Set<String> owned(String node) {
    Set<String> out = new TreeSet<>();
    arm.secondaryAddresses(arm.primaryNicId(vms.get(node))).forEach((name, ip) -> {
      if (name.startsWith("ipam-egress-")) {
        out.add(ip);
      }
    });
    return out;
  }

  private EgressIPAM ipam(String name) {
    return client.resources(EgressIPAM.class).withName(name).get();
  }

  private String readyMessage(String ipam) {
    EgressIPAM x = ipam(ipam);
    return x == null || x.getStatus() == null || x.getStatus().conditions() == null ? "" : x.getStatus().conditions()
        .stream().filter(c -> "Ready".equals(c.getType())).map(c -> c.getMessage()).findFirst().orElse("");
  }

  private long nicPutsSince(int mark) {
    return arm.nicPuts(mark).stream().filter(r -> r.status() < 300).count();
  }

  /**
   * Issue 14 on Azure: an ip configuration named as ours ({@code ipam-egress-<address>}) that no
   * claim accounts for is removed after the grace (here 6 s and two passes), with an Event and a
   * count; one named as ours that another owner claims, and another tool's, stay.
   */
  @Test
  void anOrphanIpConfigurationWithNoClaimIsRemovedAfterTheGraceAndNothingElse() {
    Duration grace = Duration.ofSeconds(6);
    reconciler.orphanGrace(grace, 2);
    worker("a1", "a", subnetA);
    String nic = arm.primaryNicId(vms.get("a1"));
    String orphan = "198.51.100.50";
    String claimed = "198.51.100.51";
    String unmarked = "198.51.100.52";
    arm.seedIpConfiguration(nic, "ipam-egress-" + orphan, orphan, subnetA, null);
    arm.seedIpConfiguration(nic, "ipam-egress-" + claimed, claimed, subnetA, null);
    arm.seedIpConfiguration(nic, "other-1", unmarked, subnetA, null);
    new ClusterLedger(client).claim(Ip.parse(claimed), "vip/other",
        new org.ipamoperators.controller.common.ledger.ClaimOwner("vip", "Service", "default", "web", null));
    String ipam = cluster.n("orph");
    long start = System.nanoTime();
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"));
    await().atMost(WAIT).untilAsserted(() -> assertThat(onNic("a1")).doesNotContain(orphan));
    assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not before the grace").isGreaterThanOrEqualTo(grace);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(onNic("a1")).containsExactlyInAnyOrder(claimed, unmarked);
      assertThat(owned("a1")).containsExactly(claimed);
      assertThat(client.v1().events().inAnyNamespace().list().getItems()).anySatisfy(e -> {
        assertThat(e.getInvolvedObject().getName()).isEqualTo(ipam);
        assertThat(e.getReason()).isEqualTo("OrphanTakenOff");
        assertThat(e.getMessage()).contains(orphan, cluster.n("a1"), "claimed by nobody");
      });
      assertThat(registry.get("ipam_egressip_orphans_taken_off").tag("egressipam", ipam).counter().count()).isEqualTo(1.0);
    });
    cluster.label("a1", "example.org/unrelated", "1");
    await().during(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(onNic("a1")).containsExactlyInAnyOrder(claimed, unmarked));
  }

  @Test
  void zonesAndCapacityAreKeptWithOnePutPerChangedNicAndNoneWhenNothingChanged() {
    worker("a1", "a", subnetA);
    worker("a2", "a", subnetA);
    worker("b1", "b", subnetB);
    worker("b2", "b", subnetB);
    // another tool's two configurations on a1: with 4 per NIC, a1 has room for one of ours
    String a1Nic = arm.primaryNicId(vms.get("a1"));
    arm.seedIpConfiguration(a1Nic, "other-1", "198.51.100.30", subnetA, null);
    arm.seedIpConfiguration(a1Nic, "other-2", "198.51.100.31", subnetA, null);
    String ipam = cluster.n("az");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"), cidr(CIDR_B, "b"));
    for (String ns : List.of("ns1", "ns2", "ns3")) {
      cluster.namespace(ns, ipam, null);
    }
    await().atMost(WAIT).untilAsserted(() -> {
      for (String ns : List.of("ns1", "ns2", "ns3")) {
        assertThat(cluster.egressIps(ns)).isNotNull();
      }
      assertThat(owned("a1").size() + owned("a2").size()).isEqualTo(3);
      assertThat(owned("a1")).hasSizeLessThanOrEqualTo(1); // its NIC limit, less the other tool's two
      assertThat(owned("b1").size() + owned("b2").size()).isEqualTo(3);
      assertThat(onNic("a1")).contains("198.51.100.30", "198.51.100.31");
      assertThat(EgressCluster.condition(ipam(ipam), "Ready")).as(readyMessage(ipam)).isEqualTo("True");
    });
    // no annotation: the egress configurations join the primary's backend pool, as with the old operator
    assertThat(arm.poolMembers(lb, "pool1").stream().filter(id -> id.contains("/ipConfigurations/ipam-egress-")))
        .hasSize(6);
    Set<String> ours = new TreeSet<>();
    for (String ns : List.of("ns1", "ns2", "ns3")) {
      ours.addAll(List.of(cluster.egressIps(ns).split(",")));
    }
    assertThat(ours).hasSize(6).doesNotContain("198.51.100.30", "198.51.100.31", "198.51.100.0", "198.51.100.1",
        "198.51.100.2", "198.51.100.3", "198.51.100.63", "198.51.100.64", "198.51.100.127");
    // a reconcile with nothing to change reads Azure but writes nothing
    int mark = arm.requests().size();
    cluster.label("b1", "example.org/unrelated", "1");
    await().atMost(WAIT).until(() -> arm.requests().subList(mark, arm.requests().size()).stream()
        .anyMatch(r -> r.path().toLowerCase().endsWith("/virtualnetworks/vnet1")));
    int second = arm.requests().size();
    cluster.label("b1", "example.org/unrelated", "2");
    await().atMost(WAIT).until(() -> arm.requests().subList(second, arm.requests().size()).stream()
        .anyMatch(r -> r.path().toLowerCase().endsWith("/virtualnetworks/vnet1")));
    assertThat(nicPutsSince(mark)).as("no NIC PUT when nothing changed").isZero();
    Map<String, Long> perCall = new java.util.TreeMap<>();
    arm.requests().subList(second, arm.requests().size()).forEach(r -> perCall.merge(r.method() + " "
        + r.path().replaceAll(".*/providers/", "").replaceAll("/[^/]+$", "/*"), 1L, Long::sum));
    org.slf4j.LoggerFactory.getLogger(AzureEgressIT.class).info("ARM calls of one no-op reconcile, 4 nodes, 2 CIDRs: {}",
        perCall);

    // one more namespace: one PUT per NIC that changes (two zones: two NICs), not two per node
    int before = arm.requests().size();
    cluster.namespace("ns4", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns4")).isNotNull();
      String[] ips = cluster.egressIps("ns4").split(",");
      assertThat(owned("a1").contains(ips[0]) || owned("a2").contains(ips[0])).isTrue();
      assertThat(owned("b1").contains(ips[1]) || owned("b2").contains(ips[1])).isTrue();
    });
    assertThat(nicPutsSince(before)).isEqualTo(2);
  }

  @Test
  void addressesFailOverWhenANodeGoesNotReadyAndWhenItsVmIsDeleted() {
    worker("a1", "a", subnetA);
    worker("a2", "a", subnetA);
    worker("a3", "a", subnetA);
    String ipam = cluster.n("fo");
    cluster.ipam(ipam, ZONE, WORKERS, null, 1, cidr(CIDR_A, "a"));
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.egressIps("ns1")).isNotNull());
    String ip = cluster.egressIps("ns1");
    await().atMost(WAIT).untilAsserted(() -> assertThat(owned("a1")).containsExactly(ip));

    cluster.setReady("a1", false);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(owned("a1")).isEmpty();
      assertThat(owned("a2")).containsExactly(ip);
      assertThat(cluster.hostSubnetIps("a2")).containsExactly(ip);
    });

    arm.deleteVm(vms.get("a2"));
    cluster.setReady("a2", false);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(owned("a3")).containsExactly(ip);
      assertThat(cluster.hostSubnetIps("a3")).containsExactly(ip);
      assertThat(readyMessage(ipam)).contains("ResourceNotFound", "GetVirtualMachine");
      assertThat(client.v1().events().inAnyNamespace().list().getItems()).anySatisfy(e -> {
        assertThat(e.getReason()).isEqualTo("CloudCallFailed");
        assertThat(e.getMessage()).contains("GetVirtualMachine", "ResourceNotFound", cluster.n("a2"));
      });
    });
    assertThat(cluster.egressIps("ns1")).isEqualTo(ip);
  }

  /**
   * Seeded ARM faults (500, throttling with Retry-After, another operation in progress, a stale etag)
   * on the NIC and VM calls while eight namespaces opt in, two opt out and a node fails. Once the
   * faults are used up (the six left fill the five NICs' three secondary configurations each, with a1
   * out): every namespace left has one address per CIDR, each in exactly one NIC's ip
   * configurations (of a Ready node) and in that node's HostSubnet; no NIC holds an address no
   * namespace holds; no address has two namespaces. {@code -Dipam.reliability.seed=N} replays the faults.
   */
  @Test
  void seededCloudFaultsDuringABurstLeaveEveryAddressOnExactlyOneNic() {
    long seed = Long.getLong("ipam.reliability.seed", System.nanoTime());
    org.slf4j.LoggerFactory.getLogger(AzureEgressIT.class).info("[cloud-faults] azure seed {}", seed);
    java.util.Random random = new java.util.Random(seed);
    List<String> nodes = List.of("a1", "a2", "a3", "b1", "b2"); // 3 secondary configurations per NIC
    nodes.forEach(n -> worker(n, n.substring(0, 1), n.startsWith("a") ? subnetA : subnetB));
    List<java.util.function.IntFunction<ArmServer.Fault>> kinds = List.of(
        t -> ArmServer.Fault.of("GET", "networkInterfaces/[^/]+$", 500, "InternalServerError", t),
        t -> ArmServer.Fault.of("PUT", "networkInterfaces/[^/]+$", 500, "InternalServerError", t),
        t -> ArmServer.Fault.of("PUT", "networkInterfaces/[^/]+$", 429, "SubscriptionRequestsThrottled", t).retryAfter(1),
        t -> ArmServer.Fault.of("PUT", "networkInterfaces/[^/]+$", 409, "AnotherOperationInProgress", t),
        t -> ArmServer.Fault.of("PUT", "networkInterfaces/[^/]+$", 412, "PreconditionFailedEtagMismatch", t),
        t -> ArmServer.Fault.of("GET", "virtualMachines/[^/]+$", 500, "InternalServerError", t));
    List<ArmServer.Fault> injected = new java.util.ArrayList<>();
    List<Integer> asked = new java.util.ArrayList<>();
    Runnable someFaults = () -> {
      for (int i = 0; i < 4; i++) {
        int times = 1 + random.nextInt(8);
        ArmServer.Fault f = kinds.get(random.nextInt(kinds.size())).apply(times);
        injected.add(f);
        asked.add(times);
        arm.inject(f);
      }
    };
    String ipam = cluster.n("cf");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"), cidr(CIDR_B, "b"));
    someFaults.run();
    for (int i = 0; i < 8; i++) {
      cluster.namespace("ns" + i, ipam, null);
    }
    await().atMost(WAIT).until(() -> cluster.egressIps("ns0") != null);
    someFaults.run();
    for (int i = 0; i < 2; i++) {
      cluster.annotate("ns" + i, org.ipamoperators.egressip.api.EgressAnnotations.EGRESSIPAM, null);
    }
    cluster.setReady("a1", false);
    someFaults.run();

    await().atMost(Duration.ofSeconds(180)).untilAsserted(() -> {
      Map<String, String> holder = new HashMap<>();
      for (int i = 2; i < 8; i++) {
        String ips = cluster.egressIps("ns" + i);
        assertThat(ips).as("ns%d", i).isNotNull();
        String[] two = ips.split(",");
        assertThat(two).hasSize(2);
        for (String ip : two) {
          assertThat(holder.put(ip, "ns" + i)).as("%s has two namespaces", ip).isNull();
        }
      }
      for (int i = 0; i < 2; i++) {
        assertThat(cluster.egressIps("ns" + i)).as("ns%d opted out", i).isNull();
      }
      Map<String, List<String>> onNics = new HashMap<>();
      for (String n : nodes) {
        assertThat(owned(n)).as("configurations of %s", n).isEqualTo(onNic(n));
        onNic(n).forEach(ip -> onNics.computeIfAbsent(ip, k -> new java.util.ArrayList<>()).add(n));
      }
      assertThat(onNics.keySet()).as("on a NIC, and only those").isEqualTo(holder.keySet());
      Map<String, List<String>> hosted = cluster.hostedAnywhere();
      for (var e : onNics.entrySet()) {
        assertThat(e.getValue()).as("NICs holding %s", e.getKey()).hasSize(1).doesNotContain("a1");
        assertThat(hosted.get(e.getKey())).as("HostSubnets of %s", e.getKey()).containsExactly(cluster.n(e.getValue().get(0)));
      }
      assertThat(EgressCluster.condition(ipam(ipam), "Ready")).as(readyMessage(ipam)).isEqualTo("True");
    });
    Map<String, Integer> used = new java.util.TreeMap<>();
    for (int i = 0; i < injected.size(); i++) {
      ArmServer.Fault f = injected.get(i);
      used.merge(f.method() + " " + f.path().pattern().split("/")[0] + " " + f.status() + " " + f.code(),
          asked.get(i) - Math.max(0, f.left()[0]), Integer::sum);
    }
    int total = used.values().stream().mapToInt(Integer::intValue).sum();
    org.slf4j.LoggerFactory.getLogger(AzureEgressIT.class).info("[cloud-faults] azure seed {}: {} faults injected {}", seed, total, used);
    assertThat(total).as("faults reached the operator").isPositive();
  }

  @Test
  void addressesTheOldOperatorPlacedAreTakenOverWhereTheyAreWithoutAWrite() {
    worker("a1", "a", subnetA);
    worker("a2", "a", subnetA);
    String old = "198.51.100.40";
    arm.seedIpConfiguration(arm.primaryNicId(vms.get("a2")), "EgressIP" + old, old, subnetA, null);
    int mark = arm.requests().size();
    String ipam = cluster.n("mig");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"));
    cluster.namespace("ns1", ipam, old);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(Ledgers.holder(client, Ip.parse(old))).isPresent();
      assertThat(onNic("a2")).containsExactly(old);
      assertThat(onNic("a1")).isEmpty();
      assertThat(cluster.hostSubnetIps("a2")).containsExactly(old);
      assertThat(EgressCluster.condition(ipam(ipam), "Ready")).as(readyMessage(ipam)).isEqualTo("True");
    });
    assertThat(cluster.egressIps("ns1")).isEqualTo(old);
    assertThat(nicPutsSince(mark)).isZero();

    // a restart: the new process knows nothing of the NICs, reads them, and writes nothing
    operator.stop();
    startOperator();
    int restart = arm.requests().size();
    cluster.label("a1", "example.org/unrelated", "1");
    await().atMost(WAIT).until(() -> arm.requests().subList(restart, arm.requests().size()).stream()
        .anyMatch(r -> r.path().toLowerCase().endsWith("/virtualnetworks/vnet1")));
    await().atMost(WAIT).untilAsserted(() -> assertThat(EgressCluster.condition(ipam(ipam), "Ready")).isEqualTo("True"));
    assertThat(onNic("a2")).containsExactly(old);
    assertThat(nicPutsSince(mark)).isZero();
  }

  @Test
  void theOldLoadBalancerAnnotationNoneKeepsEgressConfigurationsOutOfThePools() {
    worker("a1", "a", subnetA);
    String ipam = cluster.n("nolb");
    EgressIPAM x = new EgressIPAM();
    x.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(ipam)
        .withAnnotations(Map.of("egressip-ipam-operator.redhat-cop.io/azure-egress-load-balancer", "none")).build());
    x.setSpec(new org.ipamoperators.egressip.api.EgressIPAMSpec(List.of(cidr(CIDR_A, "a")), ZONE,
        new io.fabric8.kubernetes.api.model.LabelSelectorBuilder().withMatchLabels(WORKERS).build(), null, null, null));
    client.resource(x).create();
    cluster.namespace("ns1", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isNotNull();
      assertThat(owned("a1")).containsExactly(cluster.egressIps("ns1"));
    });
    assertThat(arm.poolMembers(lb, "pool1")).noneMatch(id -> id.contains("/ipConfigurations/ipam-egress-"))
        .anyMatch(id -> id.contains("/ipConfigurations/ipconfig1"));
  }

  @Test
  void namespaceAndIpamDeletionReleaseExactlyWhatWasAttached() {
    worker("a1", "a", subnetA);
    worker("b1", "b", subnetB);
    String a1Nic = arm.primaryNicId(vms.get("a1"));
    arm.seedIpConfiguration(a1Nic, "other-tool", "198.51.100.30", subnetA, null);
    String ipam = cluster.n("del");
    cluster.ipam(ipam, ZONE, WORKERS, null, null, cidr(CIDR_A, "a"), cidr(CIDR_B, "b"));
    cluster.namespace("ns1", ipam, null);
    cluster.namespace("ns2", ipam, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(cluster.egressIps("ns1")).isNotNull();
      assertThat(cluster.egressIps("ns2")).isNotNull();
      assertThat(owned("a1")).hasSize(2);
      assertThat(owned("b1")).hasSize(2);
    });
    String[] ns2 = cluster.egressIps("ns2").split(",");
    client.namespaces().withName(cluster.n("ns1")).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(owned("a1")).containsExactly(ns2[0]);
      assertThat(owned("b1")).containsExactly(ns2[1]);
    });
    client.resources(EgressIPAM.class).withName(ipam).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(ipam(ipam)).isNull();
      assertThat(onNic("a1")).as("another tool's configuration is never taken").containsExactly("198.51.100.30");
      assertThat(onNic("b1")).isEmpty();
      assertThat(Ledgers.ofPool(client, "egressipam/" + ipam)).isEmpty();
    });
  }
}
