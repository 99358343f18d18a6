package org.ipamoperators.cloud.aws;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeRef;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Rules of EC2 that moto 5.1.22 does not enforce, against {@link FakeEc2}: each test names the
 * fidelity gap it covers.
 */
class Ec2NodeNetworkFakeTest {
  private final FakeEc2 ec2 = new FakeEc2();
  private Ec2NodeNetwork network;
  private String small;
  private String big;

  @BeforeEach
  void setUp() throws Exception {
    network = new Ec2NodeNetwork(ec2, Clock.systemUTC(), Duration.ofMinutes(5));
    String subnet = ec2.subnet("10.0.1.0/24");
    small = ec2.instance(subnet, "t3.micro", "10.0.1.5", 0);
    big = ec2.instance(subnet, "m5.large", "10.0.1.6", 0);
    network.describe(node("small", small, "t3.micro"));
    network.describe(node("big", big, "m5.large"));
  }

  private static NodeRef node(String name, String instance, String type) {
    return new NodeRef(name, "aws:///us-east-1a/" + instance, Map.of(Ec2NodeNetwork.INSTANCE_TYPE_LABEL, type),
        List.of());
  }

  /** moto gap: AssignPrivateIpAddresses ignores the instance type's addresses-per-interface limit. */
  @Test
  void theEniLimitFailsThatNodeWithAwsCodeAndOthersProceed() throws Exception {
    assertThat(network.describe(node("small", small, "t3.micro")).capacity()).isEqualTo(1);

    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(Ip.parse("10.0.1.10"), "small"),
        AddressChange.attach(Ip.parse("10.0.1.11"), "small"), AddressChange.attach(Ip.parse("10.0.1.12"), "big")));

    assertThat(r.get(0).errorCode()).isEqualTo("PrivateIpAddressLimitExceeded");
    assertThat(r.get(1).errorCode()).isEqualTo("PrivateIpAddressLimitExceeded");
    assertThat(r.get(0).message()).contains("AssignPrivateIpAddresses", "small", small);
    assertThat(r.get(0).retryable()).isFalse();
    assertThat(r.get(2).succeeded()).isTrue();
    assertThat(ec2.secondaries(ec2.primaryEni(small))).isEmpty();
    assertThat(ec2.secondaries(ec2.primaryEni(big))).containsExactly("10.0.1.12");

    // within capacity it works
    assertThat(network.apply(List.of(AddressChange.attach(Ip.parse("10.0.1.10"), "small"))))
        .allMatch(AddressChangeResult::succeeded);
  }

  /** moto gap: AssignPrivateIpAddresses accepts an address outside the ENI's subnet. */
  @Test
  void anAddressOutsideTheEnisSubnetFailsWithInvalidParameterValue() {
    List<AddressChangeResult> r = network.apply(List.of(AddressChange.attach(Ip.parse("10.0.2.10"), "big"),
        AddressChange.attach(Ip.parse("10.0.1.10"), "small")));

    assertThat(r.get(0).errorCode()).isEqualTo("InvalidParameterValue");
    assertThat(r.get(0).message()).contains("AssignPrivateIpAddresses", "big");
    assertThat(r.get(1).succeeded()).isTrue();
    assertThat(ec2.secondaries(ec2.primaryEni(big))).isEmpty();
  }

  /** moto gap: moto lists the device-index-0 ENI first; EC2 promises no order. */
  @Test
  void theDeviceIndexZeroEniIsChosenWhateverTheOrder() throws Exception {
    String subnet = ec2.subnet("10.0.3.0/24");
    String multi = ec2.instance(subnet, "m5.large", "10.0.3.5", 2); // ENIs listed as device 2, 1, 0

    NodeAttachment a = network.describe(node("multi", multi, "m5.large"));

    assertThat(a.interfaceId()).isEqualTo(ec2.primaryEni(multi));
    assertThat(a.primaryAddress()).isEqualTo(Ip.parse("10.0.3.5"));
  }

  /** moto gap: moto neither refuses an address held by another ENI nor moves it on reassignment. */
  @Test
  void aMoveTakesTheAddressOffItsOldEniInOneCall() {
    Ip ip = Ip.parse("10.0.1.20");
    assertThat(network.apply(List.of(AddressChange.attach(ip, "big")))).allMatch(AddressChangeResult::succeeded);
    ec2.calls.clear();

    assertThat(network.apply(List.of(AddressChange.move(ip, "big", "small")))).allMatch(AddressChangeResult::succeeded);

    assertThat(ec2.secondaries(ec2.primaryEni(small))).containsExactly("10.0.1.20");
    assertThat(ec2.secondaries(ec2.primaryEni(big))).isEmpty();
    assertThat(ec2.calls).containsOnlyOnce("AssignPrivateIpAddresses").doesNotContain("UnassignPrivateIpAddresses");
  }
}
