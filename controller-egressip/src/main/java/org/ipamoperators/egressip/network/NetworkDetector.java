package org.ipamoperators.egressip.network;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;

/**
 * Finds the network type from the APIs the cluster serves, asked on every reconcile (a discovery
 * call is cheap) so a migration from SDN to OVN is followed without a restart. Never throws: a
 * cluster with neither API gets {@link NetworkType#NONE}, reported in status, not a crash.
 */
public final class NetworkDetector {
  private final KubernetesClient client;

  public NetworkDetector(KubernetesClient client) {
    this.client = client;
  }

  public NetworkType detect() {
    try {
      if (client.supports(HostSubnet.class)) {
        return NetworkType.OPENSHIFT_SDN;
      }
      if (client.supports("k8s.ovn.org/v1", "EgressIP")) {
        return NetworkType.OVN_KUBERNETES;
      }
    } catch (RuntimeException e) {
      return NetworkType.NONE;
    }
    return NetworkType.NONE;
  }
}
