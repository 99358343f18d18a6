package org.ipamoperators.egressip.cloud;

import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.egressip.network.Platform;

/**
 * Which {@link NodeNetwork} drives the platform the cluster runs on, chosen at every reconcile
 * (the platform and the credentials may change while the operator runs).
 */
public interface NodeNetworks {

  /** The network, or the bare-metal fallback with the reason the platform's module is not usable. */
  record Selection(NodeNetwork network, String problem) {}

  Selection select(Platform platform);

  /** Always the same network (bare metal, tests). */
  static NodeNetworks fixed(NodeNetwork network) {
    Selection s = new Selection(network, null);
    return platform -> s;
  }
}
