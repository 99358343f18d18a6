package org.ipamoperators.cloud.aws;

import java.util.List;
import java.util.Map;
import org.ipamoperators.conformance.NodeNetworkContract;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeRef;
import org.ipamoperators.testsupport.moto.MotoServer;
import org.ipamoperators.testsupport.moto.MotoTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * EC2 passes the conformance kit against moto's server (real SDK, real HTTP). moto 5.1 does not
 * enforce the per-interface address limit: {@link Ec2ConformanceFakeTest} runs the same kit where
 * it is enforced.
 */
@MotoTest
class Ec2ConformanceMotoTest extends NodeNetworkContract {
  private Ec2NodeNetwork network;
  private Ec2World world;
  private String subnet;
  private int foreign = 250;

  @BeforeEach
  void setUp(MotoServer moto) {
    AwsSettings settings = AwsSettings.of(MotoServer.REGION.id()).withEndpoint(moto.endpoint())
        .withKeys(new AwsSettings.StaticKeys("test", "test"));
    network = Ec2NodeNetwork.create(settings);
    world = Ec2World.create(moto.ec2Client());
    subnet = world.subnet("10.0.1.0/24", "us-east-1a");
  }

  @AfterEach
  void close() {
    network.close();
  }

  @Override
  protected NodeNetwork network() {
    return network;
  }

  @Override
  protected NodeRef node(String name) {
    return Ec2World.node(name, world.instance(subnet, "m5.large"), "m5.large");
  }

  @Override
  protected NodeRef smallNode(String name) {
    return Ec2World.node(name, world.instance(subnet, "t3.micro"), "t3.micro");
  }

  @Override
  protected IpRange subnet() {
    return IpRange.parse("10.0.1.0/24");
  }

  @Override
  protected Ip foreignAddress(NodeRef node) {
    String ip = "10.0.1." + foreign--;
    world.assignForeign(world.primaryEni(ProviderId.instanceId(node.providerId()).orElseThrow()), ip);
    return Ip.parse(ip);
  }

  @Override
  protected NodeRef missingNode() {
    return new NodeRef("contract-gone", "aws:///us-east-1a/i-0123456789abcdef0", Map.of(), List.of());
  }

  @Override
  protected boolean platformEnforcesCapacity() {
    return false;
  }
}
