package org.ipamoperators.cloud.aws;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.spi.NodeRef;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;

/** A VPC in moto (or any EC2 endpoint) with subnets, instances and extra ENIs, for tests. */
final class Ec2World {
  static final String AMI = "ami-12c6146b";
  final Ec2Client ec2;
  final String vpc;

  private Ec2World(Ec2Client ec2, String vpc) {
    this.ec2 = ec2;
    this.vpc = vpc;
  }

  static Ec2World create(Ec2Client ec2) {
    String vpc = ec2.createVpc(r -> r.cidrBlock("10.0.0.0/16")).vpc().vpcId();
    return new Ec2World(ec2, vpc);
  }

  String subnet(String cidr, String zone) {
    return ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock(cidr).availabilityZone(zone)).subnet().subnetId();
  }

  String subnet(String cidr, String ipv6Cidr, String zone) {
    return ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock(cidr).ipv6CidrBlock(ipv6Cidr).availabilityZone(zone))
        .subnet().subnetId();
  }

  Instance instance(String subnet, String type) {
    return ec2.runInstances(r -> r.imageId(AMI).instanceType(type).subnetId(subnet).minCount(1).maxCount(1))
        .instances().get(0);
  }

  /** The node of an instance, as the controller would describe it from its Node object. */
  static NodeRef node(String name, Instance i, String instanceTypeLabel) {
    return new NodeRef(name, "aws:///" + i.placement().availabilityZone() + "/" + i.instanceId(),
        instanceTypeLabel == null ? Map.of() : Map.of(Ec2NodeNetwork.INSTANCE_TYPE_LABEL, instanceTypeLabel),
        List.of(Ip.parse(i.privateIpAddress())));
  }

  String eni(String subnet) {
    return ec2.createNetworkInterface(r -> r.subnetId(subnet)).networkInterface().networkInterfaceId();
  }

  void attach(String eni, String instance, int deviceIndex) {
    ec2.attachNetworkInterface(r -> r.networkInterfaceId(eni).instanceId(instance).deviceIndex(deviceIndex));
  }

  NetworkInterface describeEni(String eni) {
    return ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(eni)).networkInterfaces().get(0);
  }

  /** The ENI's secondary IPv4 and its IPv6 addresses, as text. */
  Set<String> secondaries(String eni) {
    NetworkInterface n = describeEni(eni);
    Set<String> out = new TreeSet<>();
    n.privateIpAddresses().stream().filter(a -> !Boolean.TRUE.equals(a.primary()))
        .forEach(a -> out.add(a.privateIpAddress()));
    n.ipv6Addresses().forEach(a -> out.add(a.ipv6Address()));
    return out;
  }

  Set<String> ownedTags(String eni) {
    Set<String> out = new TreeSet<>();
    Ec2NodeNetwork.ownedTags(describeEni(eni).tagSet()).forEach(ip -> out.add(ip.toString()));
    return out;
  }

  /** The device-index-0 ENI of an instance, asked of EC2 directly. */
  String primaryEni(String instance) {
    return ec2.describeInstances(r -> r.instanceIds(instance)).reservations().get(0).instances().get(0)
        .networkInterfaces().stream().filter(n -> n.attachment().deviceIndex() == 0).findFirst().orElseThrow()
        .networkInterfaceId();
  }

  void assignForeign(String eni, String... ips) {
    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(eni).privateIpAddresses(ips));
  }
}
