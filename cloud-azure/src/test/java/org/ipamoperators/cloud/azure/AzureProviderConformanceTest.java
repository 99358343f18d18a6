package org.ipamoperators.cloud.azure;

import java.util.Map;
import org.ipamoperators.conformance.NodeNetworkProviderContract;
import org.ipamoperators.core.spi.ProviderContext;

/** The Azure provider is found on the class path; it needs a subscription and a resource group. */
class AzureProviderConformanceTest extends NodeNetworkProviderContract {
  @Override
  protected String providerName() {
    return AzureNodeNetworkProvider.NAME;
  }

  @Override
  protected ProviderContext usableContext() {
    // Infrastructure's resource groups, the subscription and a service principal from the old Secret;
    // nothing is called before the network is used
    return new ProviderContext("Azure", Map.of(AzureContext.RESOURCE_GROUP, "cluster-rg",
        AzureContext.NETWORK_RESOURCE_GROUP, "net-rg"), Map.of(AzureContext.SETTING_ENDPOINT, "https://127.0.0.1:1"),
        Map.of(AzureNodeNetworkProvider.CREDENTIALS_SECRET, Map.of("azure_subscription_id", AzureNodeNetworkArmTest.SUB,
            "azure_tenant_id", "t", "azure_client_id", "c", "azure_client_secret", "not-a-real-secret")));
  }

  @Override
  protected ProviderContext unusableContext() {
    return new ProviderContext("Azure", Map.of(AzureContext.RESOURCE_GROUP, "cluster-rg"), Map.of(), Map.of());
  }
}
