package org.ipamoperators.cloud.azure;

import java.util.List;
import java.util.Set;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeNetworkProvider;
import org.ipamoperators.core.spi.ProviderContext;
import org.ipamoperators.core.spi.ProviderSetting;

/**
 * NOT COMPILED ON THIS BRANCH (its base has no NodeNetworkProvider SPI yet): at merge, move to
 * src/main/java/org/ipamoperators/cloud/azure/ and register it in
 * src/main/resources/META-INF/services/org.ipamoperators.core.spi.NodeNetworkProvider.
 *
 * <p>Serves the {@code Azure} platform with an {@link AzureNodeNetwork}: subscription, resource
 * groups, cloud and service principal from the settings, the platform's attributes
 * ({@code resourceGroupName}, {@code networkResourceGroupName}, {@code cloudName},
 * {@code subscriptionId}) and the old operator's Secret ({@link AzureContext}). Secret values are
 * never logged.
 */
public final class AzureNodeNetworkProvider implements NodeNetworkProvider {
  public static final String NAME = "azure";
  public static final String CREDENTIALS_SECRET = "egress-ipam-operator-cloud-credentials";

  /** For {@link java.util.ServiceLoader}. */
  public AzureNodeNetworkProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> platforms() {
    return Set.of("Azure");
  }

  @Override
  public List<ProviderSetting> settings() {
    return List.of(
        new ProviderSetting(AzureContext.SETTING_SUBSCRIPTION, "Azure subscription id, when the credentials Secret "
            + "has no azure_subscription_id"),
        new ProviderSetting(AzureContext.SETTING_RESOURCE_GROUP, "resource group of the nodes' VMs, when "
            + "Infrastructure has no status.platformStatus.azure.resourceGroupName"),
        new ProviderSetting(AzureContext.SETTING_NETWORK_RESOURCE_GROUP, "resource group of the virtual networks "
            + "(default: Infrastructure's networkResourceGroupName, else the VMs')"),
        new ProviderSetting(AzureContext.SETTING_ENDPOINT, "Azure Resource Manager endpoint instead of the cloud's "
            + "(Azure Stack, tests)"));
  }

  @Override
  public Set<String> secrets() {
    return Set.of(CREDENTIALS_SECRET);
  }

  @Override
  public NodeNetwork create(ProviderContext context) throws NodeNetworkException {
    try {
      return AzureNodeNetwork.create(AzureContext.resolve(context.attributes(), context.settings(),
          context.secret(CREDENTIALS_SECRET)));
    } catch (IllegalArgumentException e) {
      throw new NodeNetworkException(NAME, "InvalidSettings", e.getMessage(), false, e);
    }
  }
}
