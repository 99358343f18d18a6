package org.ipamoperators.cloud.azure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.azure.core.credential.AccessToken;
import com.azure.core.credential.TokenCredential;
import com.azure.resourcemanager.resources.fluentcore.utils.ResourceManagerUtils;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;
import org.ipamoperators.testsupport.arm.ArmServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The NodeNetwork through the real Azure SDK (network 2.57.0, compute 2.55.1, JDK HTTP client, the
 * standard pipeline with its bearer policy and retries) against the ARM server over TLS.
 * Addresses are data only.
 */
class AzureNodeNetworkArmTest {
  static final String SUB = "00000000-0000-0000-0000-00000000000a";
  private ArmServer arm;
  private AzureNodeNetwork network;
  private SimpleMeterRegistry registry;
  private String subnet;
  private String pool;
  private String lb;
  private final Map<String, String> vms = new java.util.HashMap<>();

  @BeforeAll
  static void fastPolls() {
    // The SDK waits Retry-After (1 s from the server) between operation polls; tests need not.
    ResourceManagerUtils.InternalRuntimeContext.setDelayProvider(d -> Duration.ofMillis(5));
  }

  static TokenCredential fakeCredential() {
    return request -> Mono.just(new AccessToken("test-token", OffsetDateTime.now().plusHours(1)));
  }

  static AzureNodeNetwork network(ArmServer arm, AzureSettings settings, SimpleMeterRegistry registry) {
    return AzureNodeNetwork.create(settings, fakeCredential(),
        AzureClients.jdkHttpClient(HttpClient.newBuilder().sslContext(arm.clientSslContext())), registry);
  }

  @BeforeEach
  void start() {
    arm = new ArmServer(SUB, "eastus");
    String vnet = arm.vnet("rg-net", "vnet1", "198.51.100.0/24", "2001:db8:1::/48");
    subnet = arm.subnet(vnet, "worker", "198.51.100.0/26", "2001:db8:1:1::/64");
    arm.subnet(vnet, "other", "198.51.100.64/26");
    lb = arm.loadBalancer("rg", "lb1", List.of("pool1", "outbound"), List.of("outbound"));
    pool = lb + "/backendAddressPools/pool1";
    vms.put("n1", arm.vm("rg", "n1", subnet, null, List.of(pool)));
    vms.put("n2", arm.vm("rg", "n2", subnet, null, List.of(pool)));
    registry = new SimpleMeterRegistry();
    network = network(arm, AzureSettings.of(SUB, "rg").withNetworkResourceGroup("rg-net").withEndpoint(arm.endpoint())
        .withRetries(5, Duration.ofMillis(20), Duration.ofMillis(200)), registry);
  }

  @AfterEach
  void stop() {
    network.close();
    arm.close();
  }

  private NodeRef node(String name) {
    return new NodeRef(name, "azure://" + vms.get(name), Map.of(), List.of());
  }

  private String nic(String name) {
    return arm.primaryNicId(vms.get(name));
  }

  private static Ip ip(String s) {
    return Ip.parse(s);
  }

  private int mark() {
    return arm.requests().size();
  }

  private long puts(int from) {
    return arm.nicPuts(from).stream().filter(r -> r.status() < 300).count();
  }

  @Test
  void describeFindsThePrimaryNicItsSubnetAndTheRoomOtherToolsLeave() throws Exception {
    arm.seedIpConfiguration(nic("n1"), "cni-pod-1", "198.51.100.30", subnet, null);
    arm.seedIpConfiguration(nic("n1"), "ipam-egress-198.51.100.31", "198.51.100.31", subnet, null);
    NodeAttachment a = network.describe(node("n1"));
    assertThat(a.interfaceId()).isEqualToIgnoringCase(nic("n1"));
    assertThat(a.subnets()).containsExactly(IpRange.parse("198.51.100.0/26"), IpRange.parse("2001:db8:1:1::/64"));
    assertThat(a.primaryAddress()).isEqualTo(ip("198.51.100.4")); // dynamic allocation starts at .4
    assertThat(a.secondaryAddresses()).containsExactlyInAnyOrder(ip("198.51.100.30"), ip("198.51.100.31"));
    // only the configuration named as ours is marked (what the egress controller may take off)
    assertThat(a.marked()).containsExactly(ip("198.51.100.31"));
    assertThat(a.capacity()).isEqualTo(256 - 1 - 1);
    // every call carried the bearer token and the api-version of the SDK
    assertThat(arm.requests()).allSatisfy(r -> assertThat(r.headers().get("authorization")).isEqualTo("Bearer test-token"));
    assertThat(arm.requests()).anySatisfy(r -> assertThat(r.pathAndQuery()).contains("virtualMachines/n1?api-version="
        + ArmServer.COMPUTE_API));
  }

  @Test
  void aVmWithTwoNicsIsDescribedByItsPrimaryOneAndAScaleSetOrBadProviderIdFailsAlone() throws Exception {
    String second = arm.secondNic(vms.get("n1"), subnet); // listed first, not primary
    NodeAttachment a = network.describe(node("n1"));
    assertThat(a.interfaceId()).isNotEqualToIgnoringCase(second).isEqualToIgnoringCase(nic("n1"));
    assertThatThrownBy(() -> network.describe(new NodeRef("x", "aws:///us-east-1a/i-0abc", Map.of(), List.of())))
        .isInstanceOfSatisfying(NodeNetworkException.class, e -> assertThat(e.errorCode()).isEqualTo("InvalidProviderID"));
    assertThatThrownBy(() -> network.describe(new NodeRef("y", "azure:///subscriptions/" + SUB + "/resourceGroups/rg/"
        + "providers/Microsoft.Compute/virtualMachineScaleSets/ss/virtualMachines/0", Map.of(), List.of())))
        .isInstanceOfSatisfying(NodeNetworkException.class, e -> assertThat(e.errorCode())
            .isEqualTo("ResourceNotFound"));
    arm.deleteVm(vms.get("n2"));
    assertThatThrownBy(() -> network.describe(node("n2"))).isInstanceOfSatisfying(NodeNetworkException.class, e -> {
      assertThat(e.errorCode()).isEqualTo("ResourceNotFound");
      assertThat(e.getMessage()).contains("GetVirtualMachine", "n2");
    });
  }

  @Test
  void scaleSetInstancesFlexibleOnesAreWrittenUniformOnesDescribedReadOnly() throws Exception {
    vms.put("f1", arm.flexibleScaleSetVm("rg", "flex", "flex_a1b2c3", subnet));
    assertThat(network.describe(node("f1")).capacity()).isEqualTo(255);
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "f1")));
    assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
    assertThat(arm.secondaryAddresses(nic("f1"))).containsOnlyKeys("ipam-egress-198.51.100.40");

    vms.put("u3", arm.uniformScaleSetVm("rg", "workers", "3", subnet));
    NodeAttachment a = network.describe(node("u3"));
    assertThat(a.interfaceId()).isEqualToIgnoringCase(vms.get("u3") + "/networkInterfaces/workers-nic");
    assertThat(a.subnets()).contains(IpRange.parse("198.51.100.0/26"));
    assertThat(a.primaryAddress()).isNotNull();
    assertThat(a.capacity()).as("nothing can be added by a NIC PUT").isZero();
    assertThat(arm.requests()).anySatisfy(x -> assertThat(x.pathAndQuery()).contains("/networkInterfaces/workers-nic")
        .contains("api-version=" + ArmServer.SCALE_SET_NIC_API));
    int m = mark();
    r = network.apply(List.of(AddressChange.attach(ip("198.51.100.41"), "u3"),
        AddressChange.detach(ip("198.51.100.42"), "u3")));
    assertThat(r.get(0).errorCode()).isEqualTo("ScaleSetNicNotWritable");
    assertThat(r.get(0).retryable()).isFalse();
    assertThat(r.get(0).message()).contains("workers-nic", "u3", "Uniform");
    assertThat(r.get(1).outcome()).as("not there: done").isEqualTo(AddressChangeResult.Outcome.APPLIED);
    assertThat(arm.requests().size()).as("no call").isEqualTo(m);
  }

  @Test
  void addressesInUseAreEveryHolderInTheSubnetPlusTheFiveReservedAndNeverEmptyOnError() throws Exception {
    arm.loadBalancerFrontend(lb, "internal", subnet, "198.51.100.20");
    arm.holder("/subscriptions/" + SUB + "/resourceGroups/rg/providers/Microsoft.Network/privateEndpoints/pe1", subnet,
        "198.51.100.21");
    arm.seedIpConfiguration(nic("n2"), "other-tool", "198.51.100.22", subnet, null);
    Set<Ip> used = network.addressesInUse(IpRange.parse("198.51.100.0/26"));
    assertThat(used).containsExactlyInAnyOrder(ip("198.51.100.0"), ip("198.51.100.1"), ip("198.51.100.2"),
        ip("198.51.100.3"), ip("198.51.100.63"), ip("198.51.100.4"), ip("198.51.100.5"), ip("198.51.100.20"),
        ip("198.51.100.21"), ip("198.51.100.22"));
    assertThat(network.addressesInUse(IpRange.parse("198.51.100.16/28")))
        .containsExactlyInAnyOrder(ip("198.51.100.20"), ip("198.51.100.21"), ip("198.51.100.22"));
    assertThat(arm.requests()).anySatisfy(r -> assertThat(r.pathAndQuery()).contains("$expand=subnets/ipConfigurations"));
    assertThatThrownBy(() -> network.addressesInUse(IpRange.parse("203.0.113.0/26")))
        .isInstanceOfSatisfying(NodeNetworkException.class, e -> assertThat(e.errorCode()).isEqualTo("NoSubnetForCidr"));
    arm.inject(ArmServer.Fault.of("GET", "virtualNetworks/vnet1$", 500, "InternalServerError", 10));
    assertThatThrownBy(() -> network.addressesInUse(IpRange.parse("198.51.100.0/26")))
        .isInstanceOfSatisfying(NodeNetworkException.class, e -> {
          assertThat(e.errorCode()).isEqualTo("InternalServerError");
          assertThat(e.retryable()).isTrue();
        });
  }

  @Test
  void manyAddressesGoInOnePutPerNicAndNothingIsWrittenWhenNothingChanges() throws Exception {
    ObjectNode extra = JsonNodeFactory.instance.objectNode();
    extra.putArray("applicationSecurityGroups").addObject().put("id", "/subscriptions/" + SUB
        + "/resourceGroups/rg/providers/Microsoft.Network/applicationSecurityGroups/asg1");
    arm.seedIpConfiguration(nic("n1"), "other-tool", "198.51.100.30", subnet, extra);
    ObjectNode foreignBefore = find(nic("n1"), "other-tool");
    ObjectNode primaryBefore = find(nic("n1"), "ipconfig1");
    network.describe(node("n1"));
    network.describe(node("n2"));
    int m = mark();
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1"),
        AddressChange.attach(ip("198.51.100.41"), "n1"), AddressChange.attach(ip("198.51.100.42"), "n1"),
        AddressChange.attach(ip("198.51.100.43"), "n2"), AddressChange.attach(ip("198.51.100.44"), "n2")));
    assertThat(r).allSatisfy(x -> assertThat(x.outcome()).as(x.message()).isEqualTo(AddressChangeResult.Outcome.APPLIED));
    assertThat(puts(m)).isEqualTo(2);
    assertThat(arm.secondaryAddresses(nic("n1"))).containsExactlyInAnyOrderEntriesOf(Map.of(
        "ipam-egress-198.51.100.40", "198.51.100.40", "ipam-egress-198.51.100.41", "198.51.100.41",
        "ipam-egress-198.51.100.42", "198.51.100.42", "other-tool", "198.51.100.30"));
    assertThat(find(nic("n1"), "other-tool")).as("another tool's configuration, byte for byte").isEqualTo(foreignBefore);
    assertThat(find(nic("n1"), "ipconfig1")).as("the primary, untouched").isEqualTo(primaryBefore);
    // new configurations join the primary's pool; the LB's view follows
    assertThat(arm.poolMembers(lb, "pool1")).hasSize(2 + 5);
    // every PUT carried If-Match with the etag of the GET it was computed from
    assertThat(arm.nicPuts(m)).allSatisfy(p -> assertThat(p.headers().get("if-match")).startsWith("W/\""));

    // the same placements again, as the controller confirms them every pass: no write, no read
    network.describe(node("n1"));
    network.describe(node("n2"));
    int again = mark();
    r = network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1"),
        AddressChange.attach(ip("198.51.100.41"), "n1"), AddressChange.attach(ip("198.51.100.43"), "n2")));
    assertThat(r).allSatisfy(x -> assertThat(x.succeeded()).isTrue());
    assertThat(arm.requests().size()).isEqualTo(again);
    assertThat(registry.get("ipam.azure.calls").tag("call", "PutNetworkInterface").counter().count()).isEqualTo(2);
  }

  @Test
  void theFullBodyPutKeepsTheNicsOwnSettings() throws Exception {
    String nsg = arm.networkSecurityGroup("rg", "workers-nsg");
    arm.nicSettings(nic("n1"), nsg, List.of("192.0.2.53", "192.0.2.54"), true, true, Map.of("team", "net",
        "kubernetes.io-cluster", "owned"));
    ObjectNode before = arm.nic(nic("n1"));
    network.describe(node("n1"));
    int m = mark();
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1")));
    assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
    r = network.apply(List.of(AddressChange.detach(ip("198.51.100.40"), "n1")));
    assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
    assertThat(puts(m)).isEqualTo(2);
    ObjectNode after = arm.nic(nic("n1"));
    for (String field : List.of("networkSecurityGroup", "dnsSettings", "enableAcceleratedNetworking",
        "enableIPForwarding")) {
      assertThat(after.path("properties").path(field)).as(field).isEqualTo(before.path("properties").path(field));
    }
    assertThat(after.path("properties").path("networkSecurityGroup").path("id").asText()).isEqualTo(nsg);
    assertThat(after.path("properties").path("enableAcceleratedNetworking").asBoolean()).isTrue();
    assertThat(after.path("tags")).isEqualTo(before.path("tags"));
    assertThat(after.path("tags").path("team").asText()).isEqualTo("net");
  }

  @Test
  void readsLogNoWarningAboutARestrictedHeaderAndWritesStillCarryTheirLength() throws Exception {
    ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
        org.slf4j.Logger.ROOT_LOGGER_NAME);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logs =
        new ch.qos.logback.core.read.ListAppender<>();
    logs.start();
    root.addAppender(logs);
    try {
      int m = mark();
      for (int pass = 0; pass < 4; pass++) { // steady passes: every call a read
        network.describe(node("n1"));
        network.describe(node("n2"));
        network.addressesInUse(IpRange.parse("198.51.100.0/26"));
      }
      List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1"),
          AddressChange.attach(ip("198.51.100.41"), "n2")));
      assertThat(r).allSatisfy(x -> assertThat(x.succeeded()).as(x.message()).isTrue());
      List<ArmServer.Request> since = arm.requests().subList(m, arm.requests().size());
      assertThat(since).hasSizeGreaterThanOrEqualTo(20).filteredOn(ArmServer.Request::isNicPut).hasSize(2);
      List<ch.qos.logback.classic.spi.ILoggingEvent> restricted = logs.list.stream()
          .filter(x -> x.getFormattedMessage().contains("restricted")).toList();
      // a body's length is the one header java.net.http must be given to send it unchunked: one line per PUT, from
      // the logger that ipam's logging configuration sets to ERROR
      assertThat(restricted).as("WARNs about a restricted header in %s requests", since.size()).hasSize(2)
          .allSatisfy(x -> assertThat(x.getLoggerName()).isEqualTo("com.azure.core.http.jdk.httpclient.JdkHttpClient"));
      assertThat(since).filteredOn(ArmServer.Request::isNicPut).allSatisfy(p -> assertThat(p.headers()
          .get("content-length")).isEqualTo(String.valueOf(p.body().getBytes(java.nio.charset.StandardCharsets.UTF_8)
          .length)));
      assertThat(since).filteredOn(x -> "GET".equals(x.method())).allSatisfy(x -> assertThat(x.body()).isEmpty());
    } finally {
      root.detachAppender(logs);
    }
  }

  private ObjectNode find(String nicId, String name) {
    return arm.ipConfigurations(nicId).stream().filter(c -> c.get("name").asText().equals(name)).findFirst()
        .orElseThrow();
  }

  /** Only NIC PUTs carried a conditional header among the requests since {@code from}. */
  private void onlyPutsWereConditional(int from) {
    List<ArmServer.Request> since = arm.requests().subList(from, arm.requests().size());
    assertThat(since).filteredOn(ArmServer.Request::isNicPut).isNotEmpty()
        .allSatisfy(p -> assertThat(p.conditions()).containsOnlyKeys("if-match"));
    assertThat(since).filteredOn(x -> !x.isNicPut()).as("polls and GETs carry no If-Match/If-None-Match")
        .allSatisfy(x -> assertThat(x.conditions()).as(x.method() + " " + x.path()).isEmpty());
  }

  @Test
  void ifMatchGoesOnThePutOnlyNotOnItsOperationPollsOrTheFinalGet() throws Exception {
    network.describe(node("n1"));
    arm.operationLength(2, Duration.ZERO);
    int m = mark();
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1")));
    assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
    List<ArmServer.Request> since = arm.requests().subList(m, arm.requests().size());
    assertThat(since).filteredOn(ArmServer.Request::isOperationPoll).hasSize(2);
    assertThat(since.get(since.size() - 1).method() + " " + since.get(since.size() - 1).path())
        .as("the SDK's GET of the NIC at the end of the operation").endsWith("n1-nic").startsWith("GET");
    assertThat(since).allSatisfy(x -> assertThat(x.status()).as(x.method() + " " + x.path()).isLessThan(300));
    onlyPutsWereConditional(m);
  }

  @Test
  void detachRemovesOnlyThisOperatorsConfigurationsAndTakesOverTheOldOperatorsWhereTheyAre() throws Exception {
    arm.seedIpConfiguration(nic("n1"), "other-tool", "198.51.100.30", subnet, null);
    arm.seedIpConfiguration(nic("n1"), "EgressIP198.51.100.31", "198.51.100.31", subnet, null); // the old operator's
    network.describe(node("n1"));
    int m = mark();
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("198.51.100.31"), "n1")));
    assertThat(r.get(0).succeeded()).isTrue();
    assertThat(puts(m)).as("adopted where it is, without a call").isZero();

    network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1")));
    m = mark();
    r = network.apply(List.of(AddressChange.detach(ip("198.51.100.40"), "n1"),
        AddressChange.detach(ip("198.51.100.30"), "n1"), AddressChange.detach(ip("198.51.100.31"), "n1"),
        AddressChange.detach(ip("198.51.100.50"), "n1")));
    assertThat(r.get(0).outcome()).isEqualTo(AddressChangeResult.Outcome.APPLIED);
    assertThat(r.get(1).outcome()).isEqualTo(AddressChangeResult.Outcome.SKIPPED);
    assertThat(r.get(1).message()).contains("other-tool", "did not create");
    assertThat(r.get(2).outcome()).isEqualTo(AddressChangeResult.Outcome.APPLIED);
    assertThat(r.get(3).outcome()).as("not there: done").isEqualTo(AddressChangeResult.Outcome.APPLIED);
    assertThat(puts(m)).isEqualTo(1);
    assertThat(arm.secondaryAddresses(nic("n1"))).containsExactly(Map.entry("other-tool", "198.51.100.30"));
  }

  @Test
  void aMoveReleasesOnTheSourceBeforeTheTargetTakesTheAddressAndTheGapIsMeasured() throws Exception {
    network.describe(node("n1"));
    network.describe(node("n2"));
    network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1")));
    arm.operationLength(3, Duration.ZERO); // each NIC operation needs three polls
    int m = mark();
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.move(ip("198.51.100.40"), "n1", "n2"),
        AddressChange.attach(ip("198.51.100.41"), "n1")));
    assertThat(r).allSatisfy(x -> assertThat(x.succeeded()).as(x.message()).isTrue());
    List<ArmServer.Request> puts = arm.nicPuts(m);
    assertThat(puts).hasSize(2);
    assertThat(puts.get(0).path()).endsWith("n1-nic"); // the source first, with n1's own addition in the same PUT
    assertThat(puts.get(1).path()).endsWith("n2-nic");
    assertThat(arm.secondaryAddresses(nic("n1"))).containsOnlyKeys("ipam-egress-198.51.100.41");
    assertThat(arm.secondaryAddresses(nic("n2"))).containsOnlyKeys("ipam-egress-198.51.100.40");
    assertThat(registry.get("ipam.azure.move.gap").timer().count()).isEqualTo(1);
    // the source's operation was followed to its end before the target's PUT
    int sourcePut = arm.requests().indexOf(puts.get(0));
    int targetPut = arm.requests().indexOf(puts.get(1));
    assertThat(arm.requests().subList(sourcePut, targetPut).stream().filter(x -> x.path().contains("/operations/")))
        .hasSize(3);
  }

  @Test
  void anAddressAllocatedElsewhereFailsAloneAndTheRestOfTheNicIsWritten() throws Exception {
    arm.holder("/subscriptions/" + SUB + "/resourceGroups/rg/providers/Microsoft.Network/privateEndpoints/pe1", subnet,
        "198.51.100.41");
    network.describe(node("n1"));
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1"),
        AddressChange.attach(ip("198.51.100.41"), "n1"), AddressChange.attach(ip("198.51.100.1"), "n1"),
        AddressChange.attach(ip("198.51.100.70"), "n1")));
    assertThat(r.get(0).succeeded()).isTrue();
    assertThat(r.get(1).errorCode()).isEqualTo("PrivateIPAddressIsAllocated");
    assertThat(r.get(1).message()).contains("PutNetworkInterface", "n1", "privateEndpoints/pe1");
    assertThat(r.get(2).errorCode()).isEqualTo("PrivateIPAddressInReservedRange");
    assertThat(r.get(3).errorCode()).isEqualTo("PrivateIPAddressNotInSubnet");
    assertThat(arm.secondaryAddresses(nic("n1"))).containsOnlyKeys("ipam-egress-198.51.100.40");
    assertThat(registry.get("ipam.azure.call.failures").tag("code", "PrivateIPAddressIsAllocated").counter().count())
        .isEqualTo(1);
  }

  @Test
  void conflictsAreFoundByCodeAndStructuredCallsWhateverAzuresWording() throws Exception {
    // wording without any address, holder or pool in it: only codes and structured answers are left
    arm.reword("PrivateIPAddressIsAllocated", "Die angeforderte Adresse ist vergeben.");
    arm.reword("OutboundRuleCannotBeUsedWithBackendAddressPoolThatIsReferencedBySecondaryIpConfigs",
        "Ausgangsregel und sekundäre Konfiguration vertragen sich nicht.");
    arm.holder("/subscriptions/" + SUB + "/resourceGroups/rg/providers/Microsoft.Network/privateEndpoints/pe1", subnet,
        "198.51.100.41");
    network.describe(node("n1"));
    network.apply(List.of(AddressChange.attach(ip("198.51.100.42"), "n1")));
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1"),
        AddressChange.attach(ip("198.51.100.41"), "n1")));
    assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
    assertThat(r.get(1).errorCode()).isEqualTo("PrivateIPAddressIsAllocated");
    assertThat(r.get(1).message()).contains("PutNetworkInterface", "n1", "198.51.100.41")
        .containsIgnoringCase("privateEndpoints/pe1"); // Azure upper-cases ids in subnet listings
    assertThat(arm.secondaryAddresses(nic("n1"))).containsOnlyKeys("ipam-egress-198.51.100.40",
        "ipam-egress-198.51.100.42");
    // this operator's own configuration left on a NIC a restarted process does not know: taken off there
    AzureNodeNetwork fresh = network(arm, network.settings(), registry);
    try {
      fresh.describe(node("n2"));
      r = fresh.apply(List.of(AddressChange.attach(ip("198.51.100.42"), "n2")));
      assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
      assertThat(arm.secondaryAddresses(nic("n2"))).containsOnlyKeys("ipam-egress-198.51.100.42");
      // a pool with an outbound rule, learned from the pool itself
      vms.put("n3", arm.vm("rg", "n3", subnet, null, List.of(pool, lb + "/backendAddressPools/outbound")));
      fresh.describe(node("n3"));
      r = fresh.apply(List.of(AddressChange.attach(ip("198.51.100.43"), "n3")));
      assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
      assertThat(arm.poolMembers(lb, "pool1")).anySatisfy(id -> assertThat(id).endsWith("ipam-egress-198.51.100.43"));
    } finally {
      fresh.close();
    }
  }

  @Test
  void aStaleEtagAnOperationInProgressAndAFailedOperationAreRetriedFromAFreshRead() throws Exception {
    network.describe(node("n1"));
    // another tool writes the NIC after describe: the NIC is read again before the PUT
    arm.seedIpConfiguration(nic("n1"), "other-tool", "198.51.100.30", subnet, null);
    // and Azure refuses the first PUT's etag (a write between that read and the PUT)
    arm.inject(ArmServer.Fault.of("PUT", "n1-nic$", 412, "PreconditionFailedEtagMismatch", 1));
    int m = mark();
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1")));
    assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
    assertThat(arm.nicPuts(m).stream().map(ArmServer.Request::status).toList()).containsExactly(412, 200);
    assertThat(arm.secondaryAddresses(nic("n1"))).as("the other tool's write survives")
        .containsOnlyKeys("other-tool", "ipam-egress-198.51.100.40");
    String etagSent = arm.nicPuts(m).get(1).headers().get("if-match");
    assertThat(arm.requests().subList(m, arm.requests().size()).stream().filter(x -> "GET".equals(x.method())
        && x.path().endsWith("n1-nic"))).as("a GET before each PUT, and the SDK's at the end of the operation")
        .hasSize(3);
    assertThat(etagSent).startsWith("W/\"");

    // Azure says another operation runs; then the operation of the next PUT ends Failed
    arm.inject(ArmServer.Fault.of("PUT", "n1-nic$", 409, "AnotherOperationInProgress", 1));
    arm.failNextOperation("InternalServerError", "the operation failed");
    m = mark();
    r = network.apply(List.of(AddressChange.attach(ip("198.51.100.41"), "n1")));
    assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
    assertThat(arm.nicPuts(m).stream().map(ArmServer.Request::status).toList()).containsExactly(409, 200, 200);
    assertThat(arm.secondaryAddresses(nic("n1"))).containsOnlyKeys("other-tool", "ipam-egress-198.51.100.40",
        "ipam-egress-198.51.100.41");
    assertThat(arm.nicProvisioningState(nic("n1"))).isEqualTo("Succeeded");
  }

  @Test
  void throttlingIsRetriedWithRetryAfterAndANodeThrottledPastTheBudgetFailsAlone() throws Exception {
    network.describe(node("n1"));
    network.describe(node("n2"));
    arm.inject(ArmServer.Fault.of("PUT", "n1-nic$", 429, "SubscriptionRequestsThrottled", 2).retryAfter(1));
    int m = mark();
    long t0 = System.nanoTime();
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1")));
    assertThat(r.get(0).succeeded()).isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("Retry-After honoured").isGreaterThan(Duration.ofMillis(1900));
    assertThat(arm.nicPuts(m).stream().map(ArmServer.Request::status).toList()).containsExactly(429, 429, 200);

    arm.inject(ArmServer.Fault.of("PUT", "n2-nic$", 429, "SubscriptionRequestsThrottled", 1000).retryAfter(1));
    AzureNodeNetwork brief = network(arm, network.settings().withRetries(2, Duration.ofMillis(10), Duration.ofMillis(10)),
        registry);
    brief.describe(node("n1"));
    brief.describe(node("n2"));
    r = brief.apply(List.of(AddressChange.attach(ip("198.51.100.41"), "n1"),
        AddressChange.attach(ip("198.51.100.42"), "n2")));
    assertThat(r.get(0).succeeded()).isTrue();
    assertThat(r.get(1).outcome()).isEqualTo(AddressChangeResult.Outcome.FAILED);
    assertThat(r.get(1).errorCode()).isEqualTo("SubscriptionRequestsThrottled");
    assertThat(r.get(1).retryable()).isTrue();
    assertThat(r.get(1).message()).contains("PutNetworkInterface", "n2-nic", "node n2");
    brief.close();
  }

  @Test
  void loadBalancerPoolsFollowThePolicyAndPoolsWithOutboundRulesAreLeftOut() throws Exception {
    String vm3 = arm.vm("rg", "n3", subnet, null, List.of(pool, lb + "/backendAddressPools/outbound"));
    vms.put("n3", vm3);
    network.describe(node("n3"));
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n3")));
    assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
    assertThat(arm.poolMembers(lb, "pool1")).anySatisfy(id -> assertThat(id).endsWith("ipam-egress-198.51.100.40"));
    assertThat(arm.poolMembers(lb, "outbound")).noneSatisfy(id -> assertThat(id).contains("ipam-egress"));

    // the old operator's EgressIPAM annotation, through the SPI's hook as the controller passes it
    org.ipamoperators.core.spi.NodeNetwork none = ((org.ipamoperators.core.spi.NodeNetwork) network)
        .configuredBy(Map.of(LoadBalancerPolicy.ANNOTATION, "none", "unrelated/key", "x"));
    none.describe(node("n3"));
    int m = mark();
    r = none.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n3"),
        AddressChange.attach(ip("198.51.100.41"), "n3")));
    assertThat(r).allSatisfy(x -> assertThat(x.succeeded()).isTrue());
    assertThat(puts(m)).isEqualTo(1);
    assertThat(arm.poolMembers(lb, "pool1")).noneSatisfy(id -> assertThat(id).contains("ipam-egress"));
    assertThat(LoadBalancerPolicy.fromAnnotation("none")).isEqualTo(LoadBalancerPolicy.NONE);
    assertThat(network.configuredBy(Map.of())).as("no annotation: the default policy").isSameAs(network);
    assertThat(LoadBalancerPolicy.fromAnnotation("same-as-primary-ip")).isEqualTo(LoadBalancerPolicy.SAME_AS_PRIMARY);
  }

  @Test
  void ipv6GoesWhereTheSubnetHasAnIpv6PrefixAndTheNicLimitIsKept() throws Exception {
    network.describe(node("n1"));
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(ip("2001:db8:1:1::40"), "n1")));
    assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
    ObjectNode v6 = find(nic("n1"), "ipam-egress-2001-db8-1-1--40");
    assertThat(v6.path("properties").path("privateIPAddressVersion").asText()).isEqualTo("IPv6");

    String other = arm.subnet("/subscriptions/" + SUB + "/resourceGroups/rg-net/providers/Microsoft.Network/"
        + "virtualNetworks/vnet1", "v4only", "198.51.100.128/26");
    vms.put("n4", arm.vm("rg", "n4", other, null, List.of()));
    arm.nicLimit(4);
    AzureNodeNetwork small = network(arm, network.settings().withIpConfigurationsPerNic(4), registry);
    try {
      NodeAttachment a = small.describe(node("n4"));
      assertThat(a.capacity()).isEqualTo(3);
      int m = mark();
      r = small.apply(List.of(AddressChange.attach(ip("2001:db8:1:1::41"), "n4"),
          AddressChange.attach(ip("198.51.100.140"), "n4"), AddressChange.attach(ip("198.51.100.141"), "n4"),
          AddressChange.attach(ip("198.51.100.142"), "n4"), AddressChange.attach(ip("198.51.100.143"), "n4")));
      assertThat(r.get(0).errorCode()).isEqualTo("SubnetHasNoIpv6");
      assertThat(r.subList(1, 4)).allSatisfy(x -> assertThat(x.succeeded()).isTrue());
      assertThat(r.get(4).errorCode()).isEqualTo("NicIpConfigurationLimit");
      assertThat(puts(m)).isEqualTo(1);
    } finally {
      small.close();
    }
  }

  @Test
  void anAddressLeftOnANicOfThisOperatorThatWasNotDescribedIsTakenOffItForTheNewNode() throws Exception {
    network.describe(node("n1"));
    network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1")));
    AzureNodeNetwork fresh = network(arm, network.settings(), registry); // a restarted operator: n1 unknown
    try {
      fresh.describe(node("n2"));
      int m = mark();
      List<AddressChangeResult> r = fresh.apply(List.of(AddressChange.move(ip("198.51.100.40"), "n1", "n2")));
      assertThat(r.get(0).succeeded()).as(r.get(0).message()).isTrue();
      onlyPutsWereConditional(m);
      assertThat(arm.secondaryAddresses(nic("n1"))).isEmpty();
      assertThat(arm.secondaryAddresses(nic("n2"))).containsOnlyKeys("ipam-egress-198.51.100.40");
    } finally {
      fresh.close();
    }
  }

  @Test
  void aQuarantinedAddressIsReportedWithTheGapAndRetryable() throws Exception {
    arm.quarantine(Duration.ofMinutes(10));
    arm.reword("PrivateIPAddressIsAllocated", "Address not available.");
    network.describe(node("n1"));
    network.describe(node("n2"));
    network.apply(List.of(AddressChange.attach(ip("198.51.100.40"), "n1")));
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.move(ip("198.51.100.40"), "n1", "n2")));
    assertThat(r.get(0).errorCode()).isEqualTo("PrivateIPAddressIsAllocated");
    assertThat(r.get(0).retryable()).isTrue();
    assertThat(r.get(0).message()).contains("on no NIC");
    assertThat(arm.secondaryAddresses(nic("n1"))).isEmpty();
  }
}
