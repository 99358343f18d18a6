package org.ipamoperators.cloud.aws;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.testsupport.moto.FaultProxy;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Instance;

/**
 * Throttling and 5xx answers, injected by a {@link FaultProxy} in front of moto (moto cannot
 * throttle), are retried with backoff and lose no work; a node whose calls keep failing fails alone.
 */
@MotoTest
class Ec2RetryTest {
  private FaultProxy proxy;
  private Ec2World world;
  private Ec2Client proxied;
  private Instance i1;
  private Instance i2;

  @BeforeEach
  void setUp(MotoServer moto, Ec2Client direct) throws Exception {
    proxy = new FaultProxy(moto.endpoint());
    world = Ec2World.create(direct);
    String subnet = world.subnet("10.0.1.0/24", "us-east-1a");
    i1 = world.instance(subnet, "m5.large");
    i2 = world.instance(subnet, "m5.large");
  }

  @AfterEach
  void tearDown() {
    if (proxied != null) {
      proxied.close();
    }
    proxy.close();
  }

  private Ec2NodeNetwork network(int maxAttempts) {
    AwsSettings s = AwsSettings.of(MotoServer.REGION.id()).withEndpoint(proxy.endpoint())
        .withKeys(new AwsSettings.StaticKeys("test", "test"))
        .withRetries(maxAttempts, Duration.ofMillis(10), Duration.ofMillis(200));
    proxied = Ec2Clients.build(s);
    return new Ec2NodeNetwork(proxied, Clock.systemUTC(), Duration.ofMinutes(5));
  }

  @Test
  void throttlingAndServerErrorsAreRetriedAndNothingIsLost() throws Exception {
    Ec2NodeNetwork network = network(8);
    proxy.inject("DescribeInstances", null, FaultProxy.Fault.UNAVAILABLE, 2)
        .inject("DescribeInstanceTypes", null, FaultProxy.Fault.THROTTLE, 1)
        .inject("CreateTags", null, FaultProxy.Fault.INTERNAL, 1)
        .inject("AssignPrivateIpAddresses", null, FaultProxy.Fault.THROTTLE, 3);

    assertThat(network.describe(Ec2World.node("w1", i1, "m5.large")).capacity()).isEqualTo(9);
    network.describe(Ec2World.node("w2", i2, "m5.large"));
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(Ip.parse("10.0.1.10"), "w1"),
        AddressChange.attach(Ip.parse("10.0.1.11"), "w1"), AddressChange.attach(Ip.parse("10.0.1.12"), "w2")));

    assertThat(r).allMatch(AddressChangeResult::succeeded);
    assertThat(proxy.allFaultsUsed()).isTrue();
    assertThat(proxy.injected()).hasSize(7);
    assertThat(world.secondaries(world.primaryEni(i1.instanceId()))).containsExactly("10.0.1.10", "10.0.1.11");
    assertThat(world.secondaries(world.primaryEni(i2.instanceId()))).containsExactly("10.0.1.12");
  }

  @Test
  void anAssignWhoseAnswerWasLostKeepsItsAddressListedAsOurs() throws Exception {
    // EC2 assigns the address, the answer is lost, the SDK's retries are reset before they reach EC2: the call
    // failed for the SDK, yet the address is on the ENI. It must stay listed in the ownership tags (unlisted, it
    // would belong to nobody) and count as attached.
    Ec2NodeNetwork network = network(3);
    String eni1 = world.primaryEni(i1.instanceId());
    proxy.inject("AssignPrivateIpAddresses", null, FaultProxy.Fault.LOST_ANSWER, 1)
        .inject("AssignPrivateIpAddresses", null, FaultProxy.Fault.RESET, 2);
    network.describe(Ec2World.node("w1", i1, "m5.large"));

    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(Ip.parse("10.0.1.20"), "w1")));

    assertThat(proxy.allFaultsUsed()).isTrue();
    assertThat(world.secondaries(eni1)).containsExactly("10.0.1.20");
    assertThat(r).allMatch(AddressChangeResult::succeeded);
    assertThat(network.describe(Ec2World.node("w1", i1, "m5.large")).marked()).containsExactly(Ip.parse("10.0.1.20"));
  }

  @Test
  void aNodeThrottledPastTheBudgetFailsAloneAndTheNextPassFinishesTheWork() throws Exception {
    Ec2NodeNetwork network = network(3);
    String eni1 = world.primaryEni(i1.instanceId());
    network.describe(Ec2World.node("w1", i1, "m5.large"));
    network.describe(Ec2World.node("w2", i2, "m5.large"));
    proxy.inject("AssignPrivateIpAddresses", eni1, FaultProxy.Fault.THROTTLE, 3);
    List<AddressChange> changes = List.of(AddressChange.attach(Ip.parse("10.0.1.10"), "w1"),
        AddressChange.attach(Ip.parse("10.0.1.12"), "w2"));

    List<AddressChangeResult> first = network.apply(changes);

    assertThat(first.get(0).succeeded()).isFalse();
    assertThat(first.get(0).errorCode()).isEqualTo("RequestLimitExceeded");
    assertThat(first.get(0).retryable()).isTrue();
    assertThat(first.get(0).message()).contains("AssignPrivateIpAddresses", eni1, "w1");
    assertThat(first.get(1).succeeded()).isTrue();
    assertThat(world.secondaries(eni1)).isEmpty();
    assertThat(world.ownedTags(eni1)).as("a failed assign leaves no ownership behind").isEmpty();

    List<AddressChangeResult> second = network.apply(changes);
    assertThat(second).allMatch(AddressChangeResult::succeeded);
    assertThat(world.secondaries(eni1)).containsExactly("10.0.1.10");
    assertThat(world.secondaries(world.primaryEni(i2.instanceId()))).containsExactly("10.0.1.12");
  }
}
