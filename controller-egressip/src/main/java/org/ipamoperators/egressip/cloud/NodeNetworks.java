package org.ipamoperators.egressip.cloud;

import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.egressip.network.Platform;

/**
 * Which {@link NodeNetwork} drives the platform the cluster runs on, chosen at every reconcile
 * (the platform and the credentials may change while the operator runs).
 */
public interface NodeNetworks {

  /**
   * The network, the provider that made it and the platform it serves; or a network that makes no
   * calls with the reason no provider could serve the platform.
   */
  record Selection(NodeNetwork network, String problem, String provider, String platform) {
    /** A selection without provider or platform (fixed networks, tests). */
    public Selection(NodeNetwork network, String problem) {
      this(network, problem, null, null);
    }

    /** For the status and the log: which provider serves which platform, or why none does. */
    public String description() {
      if (problem != null) {
        return problem;
      }
      return provider == null ? "" : "platform " + platform + " served by NodeNetwork provider " + provider;
    }
  }

  Selection select(Platform platform);

  /** Always the same network (bare metal, tests). */
  static NodeNetworks fixed(NodeNetwork network) {
    Selection s = new Selection(network, null);
    return platform -> s;
  }
}
