package org.ipamoperators.cloud.aws;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
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
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Instance;

/** Ec2NodeNetwork against moto's EC2 server: the real SDK, real HTTP, moto's state. */
@MotoTest
class Ec2NodeNetworkMotoTest {
  private final CallLog log = new CallLog();
  private Ec2Client client;
  private Ec2NodeNetwork network;
  private Ec2World world;
  private String subnetA;
  private String subnetB;

  @BeforeEach
  void setUp(MotoServer moto) {
    AwsSettings settings = AwsSettings.of(MotoServer.REGION.id()).withEndpoint(moto.endpoint())
        .withKeys(new AwsSettings.StaticKeys("test", "test"));
    client = Ec2Clients.builder(settings).overrideConfiguration(o -> o.addExecutionInterceptor(log)).build();
    network = new Ec2NodeNetwork(client, Clock.systemUTC(), Duration.ofMinutes(5));
    world = Ec2World.create(client);
    subnetA = world.subnet("10.0.1.0/24", "us-east-1a");
    subnetB = world.subnet("10.0.2.0/24", "us-east-1b");
  }

  @AfterEach
  void close() {
    client.close();
  }

  @Test
  void describeUsesTheDeviceIndexZeroEniAmongSeveral() throws Exception {
    Instance i = world.instance(subnetA, "m5.large");
    String extra1 = world.eni(subnetA);
    String extra2 = world.eni(subnetA);
    world.attach(extra1, i.instanceId(), 1);
    world.attach(extra2, i.instanceId(), 2);

    NodeAttachment a = network.describe(Ec2World.node("w1", i, "m5.large"));

    assertThat(a.interfaceId()).isEqualTo(world.primaryEni(i.instanceId())).isNotIn(extra1, extra2);
    assertThat(a.primaryAddress()).isEqualTo(Ip.parse(i.privateIpAddress()));
    assertThat(a.subnets()).containsExactly(IpRange.parse("10.0.1.0/24"));
    assertThat(a.marked()).isEmpty();
  }

  @Test
  void describeMarksOnlyTheSecondariesTheOwnershipTagsList() throws Exception {
    Instance i = world.instance(subnetA, "m5.large");
    String eni = world.primaryEni(i.instanceId());
    world.ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(eni).privateIpAddresses("10.0.1.50", "10.0.1.51"));
    // listed: .50 (on the ENI) and .60 (not on it: a tag alone grants nothing)
    world.ec2.createTags(r -> r.resources(eni).tags(t -> t.key(Ec2NodeNetwork.OWNED_TAGS_PREFIX + "0")
        .value("10.0.1.50 10.0.1.60")));
    NodeAttachment a = network.describe(Ec2World.node("w1", i, "m5.large"));
    assertThat(a.secondaryAddresses()).containsExactlyInAnyOrder(Ip.parse("10.0.1.50"), Ip.parse("10.0.1.51"));
    assertThat(a.marked()).containsExactly(Ip.parse("10.0.1.50"));
  }

  @Test
  void capacityComesFromTheInstanceTypeAndIsCached() throws Exception {
    Instance large = world.instance(subnetA, "m5.large"); // 10 IPv4 per interface
    Instance micro = world.instance(subnetA, "t3.micro"); // 2 IPv4 per interface

    assertThat(network.describe(Ec2World.node("large", large, "m5.large")).capacity()).isEqualTo(9);
    assertThat(network.describe(Ec2World.node("micro", micro, "t3.micro")).capacity()).isEqualTo(1);
    // the beta label, then the instance's own type, when the current label is missing
    NodeRef beta = new NodeRef("beta", Ec2World.node("x", large, null).providerId(),
        Map.of(Ec2NodeNetwork.BETA_INSTANCE_TYPE_LABEL, "t3.micro"), List.of());
    assertThat(network.describe(beta).capacity()).isEqualTo(1);
    assertThat(network.describe(Ec2World.node("bare", large, null)).capacity()).isEqualTo(9);
    // a secondary address of another tool takes a slot
    world.assignForeign(world.primaryEni(large.instanceId()), "10.0.1.200");
    assertThat(network.describe(Ec2World.node("large", large, "m5.large")).capacity()).isEqualTo(8);

    assertThat(log.count("DescribeInstanceTypes")).isEqualTo(2); // one per type, then the cache
  }

  @Test
  void addressesInUseHoldEveryEniOfTheSubnetAndTheReservedOnes() throws Exception {
    Instance w1 = world.instance(subnetA, "m5.large");
    Instance w2 = world.instance(subnetA, "m5.large");
    Instance other = world.instance(subnetB, "m5.large");
    String foreign = world.eni(subnetA); // a load balancer's, say: attached to nothing
    world.assignForeign(foreign, "10.0.1.77");
    String foreignPrimary = world.describeEni(foreign).privateIpAddress();

    Set<Ip> used = network.addressesInUse(IpRange.parse("10.0.1.0/24"));

    assertThat(used).contains(Ip.parse(w1.privateIpAddress()), Ip.parse(w2.privateIpAddress()),
        Ip.parse("10.0.1.77"), Ip.parse(foreignPrimary),
        Ip.parse("10.0.1.0"), Ip.parse("10.0.1.1"), Ip.parse("10.0.1.2"), Ip.parse("10.0.1.3"),
        Ip.parse("10.0.1.255"));
    assertThat(used).doesNotContain(Ip.parse(other.privateIpAddress()), Ip.parse("10.0.1.100"));
    assertThat(used).allMatch(ip -> IpRange.parse("10.0.1.0/24").contains(ip));

    // An IPAM CIDR inside a bigger subnet: the subnet's addresses that fall in it.
    Set<Ip> upper = network.addressesInUse(IpRange.parse("10.0.1.64/26"));
    assertThat(upper).contains(Ip.parse("10.0.1.77")).allMatch(ip -> IpRange.parse("10.0.1.64/26").contains(ip))
        .doesNotContain(Ip.parse("10.0.1.0"));
  }

  @Test
  void aCidrNoSubnetHoldsIsAnErrorNotNothingUsed() {
    assertThatThrownBy(() -> network.addressesInUse(IpRange.parse("10.0.9.0/24")))
        .isInstanceOfSatisfying(NodeNetworkException.class, e -> {
          assertThat(e.errorCode()).isEqualTo("NoSubnetForCidr");
          assertThat(e.retryable()).isFalse();
        });
  }

  @Test
  void attachesMovesAndDetachesWithOneCallPerNodeAndTagsWhatItOwns() throws Exception {
    Instance i1 = world.instance(subnetA, "m5.large");
    Instance i2 = world.instance(subnetA, "m5.large");
    String eni1 = world.primaryEni(i1.instanceId());
    String eni2 = world.primaryEni(i2.instanceId());
    network.describe(Ec2World.node("w1", i1, "m5.large"));
    network.describe(Ec2World.node("w2", i2, "m5.large"));
    Ip a = Ip.parse("10.0.1.10");
    Ip b = Ip.parse("10.0.1.11");
    log.clear();

    List<AddressChangeResult> attached = network.apply(List.of(AddressChange.attach(a, "w1"),
        AddressChange.attach(b, "w1")));
    assertThat(attached).allMatch(AddressChangeResult::succeeded);
    assertThat(world.secondaries(eni1)).containsExactly("10.0.1.10", "10.0.1.11");
    assertThat(world.ownedTags(eni1)).containsExactly("10.0.1.10", "10.0.1.11");
    assertThat(log.count("AssignPrivateIpAddresses")).isEqualTo(1);

    // The same plan again: nothing changed, nothing assigned.
    log.clear();
    assertThat(network.apply(List.of(AddressChange.attach(a, "w1")))).allMatch(AddressChangeResult::succeeded);
    assertThat(log.calls()).doesNotContain("AssignPrivateIpAddresses", "CreateTags");

    // A move is one reassigning call on the target: the address is never on no ENI.
    log.clear();
    assertThat(network.apply(List.of(AddressChange.move(a, "w1", "w2")))).allMatch(AddressChangeResult::succeeded);
    assertThat(world.secondaries(eni1)).containsExactly("10.0.1.11");
    assertThat(world.secondaries(eni2)).containsExactly("10.0.1.10");
    assertThat(world.ownedTags(eni1)).containsExactly("10.0.1.11");
    assertThat(world.ownedTags(eni2)).containsExactly("10.0.1.10");
    assertThat(log.count("AssignPrivateIpAddresses")).isEqualTo(1);

    // A move planned from a stale view (the source unknown) still finds the holder by address.
    network.describe(Ec2World.node("w1", i1, "m5.large"));
    assertThat(network.apply(List.of(AddressChange.attach(b, "w2")))).allMatch(AddressChangeResult::succeeded);
    assertThat(world.secondaries(eni1)).isEmpty();
    assertThat(world.secondaries(eni2)).containsExactly("10.0.1.10", "10.0.1.11");

    network.describe(Ec2World.node("w2", i2, "m5.large"));
    assertThat(network.apply(List.of(AddressChange.detach(a, "w2"), AddressChange.detach(b, "w2"))))
        .allMatch(AddressChangeResult::succeeded);
    assertThat(world.secondaries(eni2)).isEmpty();
    assertThat(world.ownedTags(eni2)).isEmpty();
  }

  @Test
  void foreignSecondaryAddressesAreNeverTouched() throws Exception {
    Instance i1 = world.instance(subnetA, "m5.large");
    Instance i2 = world.instance(subnetA, "m5.large");
    String eni1 = world.primaryEni(i1.instanceId());
    world.assignForeign(eni1, "10.0.1.50");
    network.describe(Ec2World.node("w1", i1, "m5.large"));
    network.describe(Ec2World.node("w2", i2, "m5.large"));

    List<AddressChangeResult> r = network.apply(List.of(
        AddressChange.detach(Ip.parse("10.0.1.50"), "w1"),          // not ours: skipped
        AddressChange.move(Ip.parse("10.0.1.50"), "w1", "w2")));     // not ours: refused

    assertThat(r.get(0).outcome()).isEqualTo(AddressChangeResult.Outcome.SKIPPED);
    assertThat(r.get(1).outcome()).isEqualTo(AddressChangeResult.Outcome.FAILED);
    assertThat(r.get(1).errorCode()).isEqualTo("AddressInUse");
    assertThat(world.secondaries(eni1)).containsExactly("10.0.1.50");
    assertThat(world.secondaries(world.primaryEni(i2.instanceId()))).isEmpty();
  }

  @Test
  void aTerminatedInstanceFailsOnlyItsOwnChanges() throws Exception {
    Instance live = world.instance(subnetA, "m5.large");
    Instance dead = world.instance(subnetA, "m5.large");
    NodeRef deadNode = Ec2World.node("dead", dead, "m5.large");
    network.describe(Ec2World.node("live", live, "m5.large"));
    network.describe(deadNode);
    client.terminateInstances(r -> r.instanceIds(dead.instanceId()));

    assertThatThrownBy(() -> network.describe(deadNode)).isInstanceOfSatisfying(NodeNetworkException.class, e -> {
      assertThat(e.errorCode()).isEqualTo("InstanceTerminated");
      assertThat(e.subject()).isEqualTo("dead");
    });
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(Ip.parse("10.0.1.20"), "dead"),
        AddressChange.attach(Ip.parse("10.0.1.21"), "live")));

    assertThat(r.get(0).succeeded()).isFalse();
    assertThat(r.get(0).errorCode()).isEqualTo("NodeNotDescribed");
    assertThat(r.get(1).succeeded()).isTrue();
    assertThat(world.secondaries(world.primaryEni(live.instanceId()))).containsExactly("10.0.1.21");
    // an instance id that never existed: the same, with AWS's own code
    NodeRef ghost = new NodeRef("ghost", "aws:///us-east-1a/i-0123456789abcdef0", Map.of(), List.of());
    assertThatThrownBy(() -> network.describe(ghost)).isInstanceOfSatisfying(NodeNetworkException.class,
        e -> assertThat(e.errorCode()).startsWith("InvalidInstanceID"));
  }

  @Test
  void ipv6AddressesGoThroughTheIpv6Calls() throws Exception {
    String subnet64 = "2001:db8:5::/64";
    String dual = world.subnet("10.0.3.0/24", subnet64, "us-east-1c");
    Instance i = world.instance(dual, "m5.large");
    String eni = world.primaryEni(i.instanceId());
    NodeAttachment a = network.describe(Ec2World.node("w6", i, "m5.large"));
    assertThat(a.subnets()).hasSize(2);
    Ip v6 = IpRange.parse(subnet64).first().next().next().next().next().next();

    assertThat(network.apply(List.of(AddressChange.attach(v6, "w6")))).allMatch(AddressChangeResult::succeeded);
    assertThat(world.secondaries(eni)).contains(v6.toString());
    assertThat(network.addressesInUse(IpRange.parse(subnet64))).contains(v6, IpRange.parse(subnet64).first());

    assertThat(network.apply(List.of(AddressChange.detach(v6, "w6")))).allMatch(AddressChangeResult::succeeded);
    assertThat(world.secondaries(eni)).doesNotContain(v6.toString());

    // a node whose subnet has no IPv6 block: refused without a call
    Instance v4only = world.instance(subnetA, "m5.large");
    network.describe(Ec2World.node("w4", v4only, "m5.large"));
    AddressChangeResult r = network.apply(List.of(AddressChange.attach(v6, "w4"))).get(0);
    assertThat(r.errorCode()).isEqualTo("SubnetHasNoIpv6");
  }
}
