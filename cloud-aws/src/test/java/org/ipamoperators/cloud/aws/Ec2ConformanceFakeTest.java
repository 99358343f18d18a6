package org.ipamoperators.cloud.aws;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.ipamoperators.conformance.NodeNetworkContract;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeRef;

/**
 * EC2 passes the conformance kit against {@link FakeEc2}, which enforces what moto does not (the
 * per-interface address limit, atomic calls); {@link Ec2ConformanceMotoTest} is the same kit over
 * real HTTP.
 */
class Ec2ConformanceFakeTest extends NodeNetworkContract {
  private final FakeEc2 ec2 = new FakeEc2();
  private final Ec2NodeNetwork network = new Ec2NodeNetwork(ec2, Clock.systemUTC(), Duration.ofMinutes(5));
  private final String subnet = ec2.subnet("10.0.1.0/24");
  private Ip nextPrimary = Ip.parse("10.0.1.200");
  private int foreign = 250;

  @Override
  protected NodeNetwork network() {
    return network;
  }

  private NodeRef make(String name, String type) {
    Ip primary = nextPrimary;
    nextPrimary = nextPrimary.next();
    String id = ec2.instance(subnet, type, primary.toString(), 0);
    return new NodeRef(name, "aws:///us-east-1a/" + id, Map.of(Ec2NodeNetwork.INSTANCE_TYPE_LABEL, type),
        List.of(primary));
  }

  @Override
  protected NodeRef node(String name) {
    return make(name, "m5.large");
  }

  @Override
  protected NodeRef smallNode(String name) {
    return make(name, "t3.micro");
  }

  @Override
  protected IpRange subnet() {
    return IpRange.parse("10.0.1.0/24");
  }

  @Override
  protected Ip foreignAddress(NodeRef node) {
    String ip = "10.0.1." + foreign--;
    String eni = ec2.primaryEni(ProviderId.instanceId(node.providerId()).orElseThrow());
    ec2.assignPrivateIpAddresses(r -> r.networkInterfaceId(eni).privateIpAddresses(ip));
    return Ip.parse(ip);
  }

  @Override
  protected NodeRef missingNode() {
    return new NodeRef("contract-gone", "aws:///us-east-1a/i-0123456789abcdef0", Map.of(), List.of());
  }
}
