package org.ipamoperators.cloud.azure;

import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeNetworkProvider;
import org.ipamoperators.core.spi.ProviderContext;
import org.ipamoperators.core.spi.ProviderSetting;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the {@code Azure} platform with an {@link AzureNodeNetwork}: subscription, resource
 * groups, cloud and service principal from the settings, the platform's attributes
 * ({@code resourceGroupName}, {@code networkResourceGroupName}, {@code cloudName},
 * {@code subscriptionId}) and the old operator's Secret ({@link AzureContext}). Secret values are
 * never logged. Azure's metrics go to Micrometer's global registry, to which the operator adds its
 * own.
 */
public final class AzureNodeNetworkProvider implements NodeNetworkProvider {
  public static final String NAME = "azure";
  public static final String CREDENTIALS_SECRET = "egress-ipam-operator-cloud-credentials";
  private static final Logger LOG = LoggerFactory.getLogger(AzureNodeNetworkProvider.class);

  private final Function<AzureSettings, AzureNodeNetwork> factory;

  /** For {@link java.util.ServiceLoader}: the credential chain, the JDK HTTP client, the global registry. */
  public AzureNodeNetworkProvider() {
    this(AzureNodeNetwork::create);
  }

  /**
   * With another way to build the network from the resolved settings (embedders and tests: a fixed
   * token, a trust store, other limits).
   *
   * @param factory builds the network of the settings the context resolves to
   */
  public AzureNodeNetworkProvider(Function<AzureSettings, AzureNodeNetwork> factory) {
    this.factory = factory;
  }

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
            + "(Azure Stack, tests)"),
        new ProviderSetting(AzureContext.SETTING_CREDENTIAL_ORDER, "credential chain order, comma-separated from "
            + "client-secret, workload-identity, managed-identity (default: the Secret's service principal when the "
            + "Secret exists, then workload identity, then managed identity)"));
  }

  @Override
  public Set<String> secrets() {
    return Set.of(CREDENTIALS_SECRET);
  }

  @Override
  public NodeNetwork create(ProviderContext context) throws NodeNetworkException {
    try {
      AzureSettings s = AzureContext.resolve(context.attributes(), context.settings(),
          context.secret(CREDENTIALS_SECRET));
      LOG.info("Azure subscription {}, resource group {} (networks in {}), {}{}, credentials: {}", s.subscriptionId(),
          s.resourceGroup(), s.vnetResourceGroup(), s.cloud(), s.endpoint() == null ? "" : " at " + s.endpoint(),
          AzureClients.describeChain(s, System.getenv()));
      return factory.apply(s);
    } catch (IllegalArgumentException e) {
      throw new NodeNetworkException(NAME, "InvalidSettings", e.getMessage(), false, e);
    }
  }
}
