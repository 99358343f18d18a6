package org.ipamoperators.cloud.baremetal;

import java.util.Set;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkProvider;
import org.ipamoperators.core.spi.ProviderContext;

/**
 * Serves the platforms where the cluster network alone carries an egress or VIP address, as
 * OpenShift's {@code Infrastructure} names them ({@code None} on plain Kubernetes): no setting, no
 * credential, no call.
 */
public final class BareMetalNodeNetworkProvider implements NodeNetworkProvider {
  /** The provider's name. */
  public static final String NAME = "baremetal";

  /** For {@link java.util.ServiceLoader}. */
  public BareMetalNodeNetworkProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> platforms() {
    return Set.of("None", "BareMetal", "VSphere", "oVirt", "OpenStack", "Libvirt", "KubeVirt", "EquinixMetal",
        "Nutanix", "External");
  }

  @Override
  public NodeNetwork create(ProviderContext context) {
    return new BareMetalNodeNetwork();
  }
}
