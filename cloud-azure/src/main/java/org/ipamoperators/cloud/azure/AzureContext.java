package org.ipamoperators.cloud.azure;

import java.net.URI;
import java.util.Map;

/**
 * {@link AzureSettings} from what a controller knows, with no Kubernetes code: the platform's
 * attributes (OpenShift's {@code Infrastructure} {@code status.platformStatus.azure}:
 * {@value #RESOURCE_GROUP}, {@value #NETWORK_RESOURCE_GROUP}, {@value #CLOUD_NAME}; and
 * {@value #SUBSCRIPTION}; a node's {@code spec.providerID} as {@value #NODE_PROVIDER_ID}, which
 * tells the subscription and the VMs' resource group), the operator's settings (keys
 * {@code azure.*}, which win) and the old operator's Secret ({@code azure_subscription_id},
 * {@code azure_tenant_id}, {@code azure_client_id}, {@code azure_client_secret},
 * {@code azure_resourcegroup}). Shaped for a {@code NodeNetworkProvider}'s context.
 */
public final class AzureContext {
  public static final String RESOURCE_GROUP = "resourceGroupName";
  public static final String NETWORK_RESOURCE_GROUP = "networkResourceGroupName";
  public static final String CLOUD_NAME = "cloudName";
  public static final String SUBSCRIPTION = "subscriptionId";
  /** A node's {@code spec.providerID}, as the controller passes it. */
  public static final String NODE_PROVIDER_ID = "nodeProviderID";
  private static final java.util.regex.Pattern PROVIDER_ID = java.util.regex.Pattern.compile(
      "^azure:///subscriptions/([^/]+)/resourceGroups/([^/]+)/", java.util.regex.Pattern.CASE_INSENSITIVE);
  /** Setting keys. */
  public static final String SETTING_SUBSCRIPTION = "azure.subscription-id";
  public static final String SETTING_RESOURCE_GROUP = "azure.resource-group";
  public static final String SETTING_NETWORK_RESOURCE_GROUP = "azure.network-resource-group";
  public static final String SETTING_ENDPOINT = "azure.endpoint";
  public static final String SETTING_CREDENTIAL_ORDER = "azure.credential-order";

  private AzureContext() {}

  /**
   * The settings, or an {@link IllegalArgumentException} saying what to set.
   *
   * @param attributes what the platform reports
   * @param settings the operator's settings, by key
   * @param secret the old operator's Secret data (empty when absent)
   */
  public static AzureSettings resolve(Map<String, String> attributes, Map<String, String> settings,
      Map<String, String> secret) {
    String nodeSubscription = null;
    String nodeGroup = null;
    java.util.regex.Matcher m = PROVIDER_ID.matcher(String.valueOf(attributes.get(NODE_PROVIDER_ID)));
    if (m.find()) {
      nodeSubscription = m.group(1);
      nodeGroup = m.group(2);
    }
    String sub = first(settings.get(SETTING_SUBSCRIPTION), secret.get("azure_subscription_id"),
        first(attributes.get(SUBSCRIPTION), nodeSubscription, null));
    if (sub == null) {
      throw new IllegalArgumentException("no Azure subscription: set IPAM_AZURE_SUBSCRIPTION_ID, or "
          + "azure_subscription_id in the credentials Secret");
    }
    String rg = first(settings.get(SETTING_RESOURCE_GROUP), attributes.get(RESOURCE_GROUP),
        first(nodeGroup, secret.get("azure_resourcegroup"), null));
    if (rg == null) {
      throw new IllegalArgumentException("no Azure resource group: Infrastructure has no status.platformStatus.azure."
          + "resourceGroupName and IPAM_AZURE_RESOURCE_GROUP is not set");
    }
    AzureSettings s = AzureSettings.of(sub, rg)
        .withNetworkResourceGroup(first(settings.get(SETTING_NETWORK_RESOURCE_GROUP),
            attributes.get(NETWORK_RESOURCE_GROUP), null))
        .withCloud(switch (String.valueOf(attributes.get(CLOUD_NAME))) {
          case "AzureUSGovernmentCloud" -> AzureSettings.Cloud.AZURE_US_GOVERNMENT;
          case "AzureChinaCloud" -> AzureSettings.Cloud.AZURE_CHINA;
          default -> AzureSettings.Cloud.AZURE_PUBLIC_CLOUD;
        });
    String endpoint = blankToNull(settings.get(SETTING_ENDPOINT));
    if (endpoint != null) {
      try {
        s = s.withEndpoint(URI.create(endpoint));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("IPAM_AZURE_ENDPOINT '" + endpoint + "' is not a URL", e);
      }
    }
    String tenant = blankToNull(secret.get("azure_tenant_id"));
    String id = blankToNull(secret.get("azure_client_id"));
    String key = blankToNull(secret.get("azure_client_secret"));
    if (tenant != null && id != null && key != null) {
      s = s.withClientSecret(new AzureSettings.ClientSecret(tenant, id, key));
    } else if (id != null || key != null) {
      throw new IllegalArgumentException("the credentials Secret needs azure_tenant_id, azure_client_id and "
          + "azure_client_secret together");
    }
    String order = blankToNull(settings.get(SETTING_CREDENTIAL_ORDER));
    if (order != null) {
      s = s.withCredentialOrder(CredentialKind.parseOrder(order));
    }
    return s;
  }

  private static String first(String a, String b, String c) {
    return blankToNull(a) != null ? a.trim() : blankToNull(b) != null ? b.trim() : blankToNull(c);
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s.trim();
  }
}
