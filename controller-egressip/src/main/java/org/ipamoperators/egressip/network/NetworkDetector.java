package org.ipamoperators.egressip.network;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;

/**
 * Finds the network type from the APIs the cluster serves, asked on every reconcile (a discovery
 * call is cheap) so a migration from SDN to OVN is followed without a restart. A cluster with
 * neither API gets {@link NetworkType#NONE}, reported in status, not a crash. A discovery error is
 * not "neither API": the last type found is kept, and with none found yet the error propagates (the
 * reconcile is retried).
 */
public final class NetworkDetector {
  private final KubernetesClient client;

  public NetworkDetector(KubernetesClient client) {
    this.client = client;
  }

  private volatile NetworkType last;

  public NetworkType detect() {
    try {
      NetworkType found = client.supports(HostSubnet.class) ? NetworkType.OPENSHIFT_SDN
          : client.supports("k8s.ovn.org/v1", "EgressIP") ? NetworkType.OVN_KUBERNETES : NetworkType.NONE;
      last = found;
      return found;
    } catch (RuntimeException e) {
      NetworkType previous = last;
      if (previous == null) {
        throw e;
      }
      return previous;
    }
  }
}
