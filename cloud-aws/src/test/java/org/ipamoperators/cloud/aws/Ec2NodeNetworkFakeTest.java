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

  /**
   * moto gap: EC2 refuses a 51st tag on a resource (TagLimitExceeded); moto does not. A dense ENI
   * with the cluster's own tags and 49 egress addresses must stay within it (review M10).
   */
  @Test
  void aDenseEniStaysWithinFiftyTagsAndOldPerAddressTagsAreReplaced() throws Exception {
    String subnet = ec2.subnet("10.0.8.0/22");
    String dense = ec2.instance(subnet, "m5.24xlarge", "10.0.8.5", 0);
    String eni = ec2.primaryEni(dense);
    for (int i = 0; i < 5; i++) {
      ec2.tag(eni, "kubernetes.io/cluster/c" + i, "owned"); // what the installer and other tools put there
    }
    ec2.tag(eni, Ec2NodeNetwork.OWNED_TAG_PREFIX + "10.0.9.200", "ipam-operators"); // the earlier form
    ec2.secondariesOf(eni).add("10.0.9.200");
    network.describe(node("dense", dense, "m5.24xlarge"));
    List<AddressChange> attach = new java.util.ArrayList<>();
    Ip ip = Ip.parse("10.0.8.10");
    for (int i = 0; i < 48; i++, ip = ip.next()) {
      attach.add(AddressChange.attach(ip, "dense"));
    }

    assertThat(network.apply(attach)).allMatch(AddressChangeResult::succeeded);

    assertThat(ec2.secondaries(eni)).hasSize(49);
    Map<String, String> tags = ec2.tags(eni);
    assertThat(tags.size()).isLessThanOrEqualTo(5 + 4);
    assertThat(tags).doesNotContainKey(Ec2NodeNetwork.OWNED_TAG_PREFIX + "10.0.9.200");
    assertThat(tags.values()).allMatch(v -> v.length() <= 256);
    java.util.Set<Ip> owned = Ec2NodeNetwork.ownedTags(tags.entrySet().stream()
        .map(e -> software.amazon.awssdk.services.ec2.model.Tag.builder().key(e.getKey()).value(e.getValue()).build())
        .toList());
    assertThat(owned).hasSize(49).contains(Ip.parse("10.0.9.200"), Ip.parse("10.0.8.57"));
    // and every one of them can be taken off again: the list is what ownership is read from
    network.describe(node("dense", dense, "m5.24xlarge"));
    assertThat(network.apply(List.of(AddressChange.detach(Ip.parse("10.0.9.200"), "dense"))))
        .allMatch(AddressChangeResult::succeeded);
    assertThat(ec2.secondaries(eni)).hasSize(48).doesNotContain("10.0.9.200");
  }

  /** Subnets change rarely: the account-wide DescribeSubnets runs once per cache period, not per pass. */
  @Test
  void addressesInUseDescribeTheAccountsSubnetsOncePerPeriodNotPerCall() throws Exception {
    ec2.calls.clear();
    for (int i = 0; i < 5; i++) {
      assertThat(network.addressesInUse(org.ipamoperators.core.address.IpRange.parse("10.0.1.0/24")))
          .contains(Ip.parse("10.0.1.5"), Ip.parse("10.0.1.6"));
    }
    assertThat(ec2.calls.stream().filter("DescribeSubnets"::equals).count()).isEqualTo(1);
    assertThat(ec2.calls.stream().filter("DescribeNetworkInterfaces"::equals).count()).isEqualTo(5);
  }
}
