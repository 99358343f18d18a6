package org.ipamoperators.cloud.baremetal;

import java.util.List;
import java.util.Map;
import org.ipamoperators.conformance.NodeNetworkContract;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeRef;
import org.ipamoperators.core.spi.ProviderContext;

/** Bare metal passes the conformance kit: nodes are plain Node objects, capacity a label. */
class BareMetalConformanceTest extends NodeNetworkContract {
  private static final IpRange SUBNET = IpRange.parse("192.0.2.0/24");
  private final NodeNetwork network = new BareMetalNodeNetworkProvider().create(ProviderContext.of("BareMetal"));
  private int next = 1;

  @Override
  protected NodeNetwork network() {
    return network;
  }

  private NodeRef make(String name, Map<String, String> labels) {
    return new NodeRef(name, null, labels, List.of(Ip.parse("192.0.2." + next++)));
  }

  @Override
  protected NodeRef node(String name) {
    return make(name, Map.of());
  }

  @Override
  protected NodeRef smallNode(String name) {
    return make(name, Map.of(BareMetalNodeNetwork.CAPACITY_KEY, "2"));
  }

  @Override
  protected IpRange subnet() {
    return SUBNET;
  }

  /** No other tool's addresses exist here: the node's own address is the one it must not touch. */
  @Override
  protected Ip foreignAddress(NodeRef node) {
    return node.addresses().get(0);
  }

  @Override
  protected NodeRef missingNode() {
    return new NodeRef("contract-gone", null, Map.of(), List.of());
  }
}
