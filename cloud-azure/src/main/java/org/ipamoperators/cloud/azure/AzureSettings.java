package org.ipamoperators.cloud.azure;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * How to reach Azure: the subscription, the resource group of the nodes' VMs and the one of the
 * virtual networks (OpenShift's Infrastructure gives both), the cloud, an optional resource-manager
 * endpoint (tests, Azure Stack), optional service-principal credentials (the old operator's Secret),
 * the load-balancer policy for new ipConfigurations, the per-NIC ipConfiguration limit, the
 * retry budget for conflicts this module retries itself and the order of the credential chain.
 */
public record AzureSettings(String subscriptionId, String resourceGroup, String networkResourceGroup, Cloud cloud,
    URI endpoint, ClientSecret clientSecret, LoadBalancerPolicy loadBalancerPolicy, int ipConfigurationsPerNic,
    int maxAttempts, Duration baseDelay, Duration maxDelay, java.util.List<CredentialKind> credentialOrder) {

  /** Azure's documented limit of private addresses per NIC. */
  public static final int AZURE_IP_CONFIGURATIONS_PER_NIC = 256;

  public enum Cloud { AZURE_PUBLIC_CLOUD, AZURE_US_GOVERNMENT, AZURE_CHINA }

  public AzureSettings {
    if (subscriptionId == null || subscriptionId.isBlank()) {
      throw new IllegalArgumentException("an Azure subscription id is needed (the azure_subscription_id of the "
          + "credentials Secret, or the subscription setting)");
    }
    Objects.requireNonNull(cloud, "cloud");
    Objects.requireNonNull(loadBalancerPolicy, "loadBalancerPolicy");
    if (ipConfigurationsPerNic < 2) {
      throw new IllegalArgumentException("ipConfigurationsPerNic must be at least 2, was " + ipConfigurationsPerNic);
    }
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
    }
    Objects.requireNonNull(baseDelay, "baseDelay");
    Objects.requireNonNull(maxDelay, "maxDelay");
    credentialOrder = java.util.List.copyOf(Objects.requireNonNull(credentialOrder, "credentialOrder"));
    if (credentialOrder.isEmpty()) {
      throw new IllegalArgumentException("the credential order names no credential");
    }
  }

  public static AzureSettings of(String subscriptionId, String resourceGroup) {
    return new AzureSettings(subscriptionId, resourceGroup, null, Cloud.AZURE_PUBLIC_CLOUD, null, null,
        LoadBalancerPolicy.SAME_AS_PRIMARY, AZURE_IP_CONFIGURATIONS_PER_NIC, 5, Duration.ofSeconds(1),
        Duration.ofSeconds(20), CredentialKind.DEFAULT_ORDER);
  }

  public AzureSettings withNetworkResourceGroup(String rg) {
    return new AzureSettings(subscriptionId, resourceGroup, rg, cloud, endpoint, clientSecret, loadBalancerPolicy,
        ipConfigurationsPerNic, maxAttempts, baseDelay, maxDelay, credentialOrder);
  }

  public AzureSettings withCloud(Cloud c) {
    return new AzureSettings(subscriptionId, resourceGroup, networkResourceGroup, c, endpoint, clientSecret,
        loadBalancerPolicy, ipConfigurationsPerNic, maxAttempts, baseDelay, maxDelay, credentialOrder);
  }

  public AzureSettings withEndpoint(URI e) {
    return new AzureSettings(subscriptionId, resourceGroup, networkResourceGroup, cloud, e, clientSecret,
        loadBalancerPolicy, ipConfigurationsPerNic, maxAttempts, baseDelay, maxDelay, credentialOrder);
  }

  public AzureSettings withClientSecret(ClientSecret s) {
    return new AzureSettings(subscriptionId, resourceGroup, networkResourceGroup, cloud, endpoint, s,
        loadBalancerPolicy, ipConfigurationsPerNic, maxAttempts, baseDelay, maxDelay, credentialOrder);
  }

  public AzureSettings withLoadBalancerPolicy(LoadBalancerPolicy p) {
    return new AzureSettings(subscriptionId, resourceGroup, networkResourceGroup, cloud, endpoint, clientSecret, p,
        ipConfigurationsPerNic, maxAttempts, baseDelay, maxDelay, credentialOrder);
  }

  public AzureSettings withIpConfigurationsPerNic(int n) {
    return new AzureSettings(subscriptionId, resourceGroup, networkResourceGroup, cloud, endpoint, clientSecret,
        loadBalancerPolicy, n, maxAttempts, baseDelay, maxDelay, credentialOrder);
  }

  public AzureSettings withRetries(int attempts, Duration base, Duration max) {
    return new AzureSettings(subscriptionId, resourceGroup, networkResourceGroup, cloud, endpoint, clientSecret,
        loadBalancerPolicy, ipConfigurationsPerNic, attempts, base, max, credentialOrder);
  }

  /** The links of the credential chain in the order they are tried (absent ones skipped). */
  public AzureSettings withCredentialOrder(java.util.List<CredentialKind> order) {
    return new AzureSettings(subscriptionId, resourceGroup, networkResourceGroup, cloud, endpoint, clientSecret,
        loadBalancerPolicy, ipConfigurationsPerNic, maxAttempts, baseDelay, maxDelay, order);
  }

  /** The resource group holding the virtual networks: the network one when given, else the VMs'. */
  public String vnetResourceGroup() {
    return networkResourceGroup != null ? networkResourceGroup : resourceGroup;
  }

  /** A service principal: the {@code azure_tenant_id/azure_client_id/azure_client_secret} of a Secret. Never printed. */
  public record ClientSecret(String tenantId, String clientId, String secret) {
    public ClientSecret {
      if (tenantId == null || tenantId.isBlank() || clientId == null || clientId.isBlank() || secret == null
          || secret.isBlank()) {
        throw new IllegalArgumentException("a tenant id, a client id and a client secret are all needed");
      }
    }

    @Override
    public String toString() {
      return "ClientSecret[tenantId=<redacted>, clientId=<redacted>, secret=<redacted>]";
    }
  }
}
