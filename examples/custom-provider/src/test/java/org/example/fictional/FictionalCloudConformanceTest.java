package org.example.fictional;

import java.util.List;
import java.util.Map;
import org.ipamoperators.conformance.NodeNetworkContract;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeRef;

/** The fictional cloud's network passes the conformance kit of the NodeNetwork SPI. */
class FictionalCloudConformanceTest extends NodeNetworkContract {
  private final FictionalCloud cloud = FictionalCloud.create("conformance", "203.0.113.0/24");
  private final NodeNetwork network = new FictionalCloudNetwork(cloud);
  private Ip nextPrimary = Ip.parse("203.0.113.100");
  private Ip nextForeign = Ip.parse("203.0.113.200");

  @Override
  protected NodeNetwork network() {
    return network;
  }

  private NodeRef make(String name, int slots) {
    Ip primary = nextPrimary;
    nextPrimary = primary.next();
    return new NodeRef(name, "fictional://" + cloud.runInstance(primary, slots), Map.of(), List.of(primary));
  }

  @Override
  protected NodeRef node(String name) {
    return make(name, 8);
  }

  @Override
  protected NodeRef smallNode(String name) {
    return make(name, 2);
  }

  @Override
  protected IpRange subnet() {
    return cloud.subnet();
  }

  @Override
  protected Ip foreignAddress(NodeRef node) {
    Ip ip = nextForeign;
    nextForeign = ip.next();
    cloud.assign(node.providerId().substring("fictional://".length()), ip, "another-tool", false);
    return ip;
  }

  @Override
  protected NodeRef missingNode() {
    return new NodeRef("gone", "fictional://fc-999", Map.of(), List.of());
  }
}
