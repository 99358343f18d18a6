package org.example.fictional;

import java.util.Map;
import org.ipamoperators.conformance.NodeNetworkProviderContract;
import org.ipamoperators.core.spi.ProviderContext;

/** The provider is found on the class path and refuses a context without its cloud. */
class FictionalProviderConformanceTest extends NodeNetworkProviderContract {
  @Override
  protected String providerName() {
    return "fictional";
  }

  @Override
  protected ProviderContext usableContext() {
    FictionalCloud.create("provider-test", "203.0.113.0/24");
    return new ProviderContext("Fictional", Map.of(), Map.of("fictional.cloud", "provider-test"), Map.of());
  }

  @Override
  protected ProviderContext unusableContext() {
    return ProviderContext.of("Fictional");
  }
}
