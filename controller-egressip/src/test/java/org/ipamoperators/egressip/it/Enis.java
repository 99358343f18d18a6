package org.ipamoperators.egressip.it;

import java.util.Set;
import java.util.TreeSet;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.NetworkInterface;

/** An EC2 instance's device-index-0 ENI (the one the egress controller uses), as the ITs read it from moto. */
final class Enis {
  private Enis() {}

  static NetworkInterface primary(Ec2Client ec2, String instanceId) {
    String id = ec2.describeInstances(r -> r.instanceIds(instanceId)).reservations().get(0).instances()
        .get(0).networkInterfaces().stream().filter(n -> n.attachment().deviceIndex() == 0).findFirst()
        .orElseThrow().networkInterfaceId();
    return ec2.describeNetworkInterfaces(r -> r.networkInterfaceIds(id)).networkInterfaces().get(0);
  }

  /** The secondary addresses on the instance's device-index-0 ENI. */
  static Set<String> secondaryAddresses(Ec2Client ec2, String instanceId) {
    Set<String> out = new TreeSet<>();
    primary(ec2, instanceId).privateIpAddresses().stream().filter(a -> !a.primary())
        .forEach(a -> out.add(a.privateIpAddress()));
    return out;
  }
}
