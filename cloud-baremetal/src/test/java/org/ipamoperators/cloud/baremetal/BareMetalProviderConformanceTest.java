package org.ipamoperators.cloud.baremetal;

import org.ipamoperators.conformance.NodeNetworkProviderContract;
import org.ipamoperators.core.spi.ProviderContext;

/** The bare-metal provider is found on the class path and creates its network from any context. */
class BareMetalProviderConformanceTest extends NodeNetworkProviderContract {
  @Override
  protected String providerName() {
    return BareMetalNodeNetworkProvider.NAME;
  }

  @Override
  protected ProviderContext usableContext() {
    return ProviderContext.of("None");
  }

  @Override
  protected ProviderContext unusableContext() {
    return null;
  }
}
