package org.ipamoperators.testsupport.moto;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Comparator;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Filter;
import software.amazon.awssdk.services.ec2.model.Image;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.InstanceNetworkInterface;
import software.amazon.awssdk.services.ec2.model.InstanceType;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;
import software.amazon.awssdk.services.ec2.model.NetworkInterfacePrivateIpAddress;
import software.amazon.awssdk.services.ec2.model.Subnet;
import software.amazon.awssdk.services.ec2.model.Vpc;

/** The EC2 calls the AWS cloud adapter makes, against moto's server over HTTP through the real SDK. */
@MotoTest
class MotoEc2IT {

  @Test
  void assignsASecondaryPrivateIpToThePrimaryEniAndReadsItBack(Ec2Client ec2) {
    Vpc vpc = ec2.createVpc(r -> r.cidrBlock("10.20.0.0/16")).vpc();
    Subnet subnet = ec2.createSubnet(r -> r.vpcId(vpc.vpcId()).cidrBlock("10.20.1.0/24")).subnet();
    String imageId = ec2.describeImages(r -> r.owners("amazon")).images().stream()
        .map(Image::imageId).min(Comparator.naturalOrder()).orElseThrow();
    Instance instance = ec2.runInstances(r -> r.imageId(imageId).instanceType(InstanceType.T3_MEDIUM)
        .subnetId(subnet.subnetId()).minCount(1).maxCount(1)).instances().get(0);
    InstanceNetworkInterface primaryEni = instance.networkInterfaces().stream()
        .filter(eni -> eni.attachment().deviceIndex() == 0)
        .findFirst().orElseThrow();

    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(primaryEni.networkInterfaceId())
        .privateIpAddresses("10.20.1.50"));

    // moto 5.1 has no "attachment.device-index" filter (it answers 500), so select the device index here.
    NetworkInterface described = ec2.describeNetworkInterfaces(r -> r.filters(
            Filter.builder().name("attachment.instance-id").values(instance.instanceId()).build()))
        .networkInterfaces().stream()
        .filter(eni -> eni.attachment().deviceIndex() == 0)
        .findFirst().orElseThrow();
    assertThat(described.networkInterfaceId()).isEqualTo(primaryEni.networkInterfaceId());
    assertThat(described.subnetId()).isEqualTo(subnet.subnetId());
    assertThat(described.privateIpAddresses())
        .filteredOn(NetworkInterfacePrivateIpAddress::primary)
        .extracting(NetworkInterfacePrivateIpAddress::privateIpAddress)
        .containsExactly(instance.privateIpAddress());
    assertThat(described.privateIpAddresses())
        .filteredOn(ip -> !ip.primary())
        .extracting(NetworkInterfacePrivateIpAddress::privateIpAddress)
        .containsExactly("10.20.1.50");
  }

  @RepeatedTest(2)
  void eachTestStartsFromAnEmptyAccount(Ec2Client ec2) {
    assertThat(ec2.describeVpcs(r -> r.filters(Filter.builder().name("cidr").values("10.99.0.0/16").build())).vpcs())
        .isEmpty();

    ec2.createVpc(r -> r.cidrBlock("10.99.0.0/16"));
  }
}
