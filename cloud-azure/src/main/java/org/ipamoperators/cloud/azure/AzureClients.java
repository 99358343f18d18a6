package org.ipamoperators.cloud.azure;

import com.azure.core.credential.TokenCredential;
import com.azure.core.http.HttpClient;
import com.azure.core.http.HttpPipeline;
import com.azure.core.http.jdk.httpclient.JdkHttpClientBuilder;
import com.azure.core.http.policy.HttpLogDetailLevel;
import com.azure.core.http.policy.HttpLogOptions;
import com.azure.core.http.policy.RetryPolicy;
import com.azure.core.management.AzureEnvironment;
import com.azure.core.management.profile.AzureProfile;
import com.azure.identity.AzureAuthorityHosts;
import com.azure.identity.ChainedTokenCredentialBuilder;
import com.azure.identity.ClientSecretCredentialBuilder;
import com.azure.identity.ManagedIdentityCredentialBuilder;
import com.azure.identity.WorkloadIdentityCredentialBuilder;
import com.azure.resourcemanager.compute.ComputeManager;
import com.azure.resourcemanager.compute.fluent.ComputeManagementClient;
import com.azure.resourcemanager.network.NetworkManager;
import com.azure.resourcemanager.network.fluent.NetworkManagementClient;
import com.azure.resourcemanager.resources.fluentcore.utils.HttpPipelineProvider;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the SDK clients: one pipeline (the SDK's standard policies: bearer token, the
 * {@code Retry-After}-aware retry of 408/429/5xx, request ids) on the JDK HTTP client, shared by
 * the network and compute clients. No netty.
 */
public final class AzureClients {
  private AzureClients() {}

  /** The network and compute clients of one subscription. */
  public record Clients(NetworkManagementClient network, ComputeManagementClient compute) {}

  public static Clients build(AzureSettings settings, TokenCredential credential, HttpClient http) {
    AzureProfile profile = new AzureProfile(settings.clientSecret() == null ? null : settings.clientSecret().tenantId(),
        settings.subscriptionId(), environment(settings));
    HttpPipeline pipeline = HttpPipelineProvider.buildHttpPipeline(credential, profile, null,
        new HttpLogOptions().setLogLevel(HttpLogDetailLevel.NONE), null, new RetryPolicy("Retry-After", ChronoUnit.SECONDS),
        List.of(new PutIfMatchPolicy(), new NoBodyNoContentLengthPolicy()), http);
    return new Clients(NetworkManager.authenticate(pipeline, profile).serviceClient(),
        ComputeManager.authenticate(pipeline, profile).serviceClient());
  }

  /** The JDK HTTP client (java.net.http). */
  public static HttpClient jdkHttpClient() {
    return jdkHttpClient(java.net.http.HttpClient.newBuilder());
  }

  /** The JDK HTTP client on {@code builder} (a proxy, an SSL context). */
  public static HttpClient jdkHttpClient(java.net.http.HttpClient.Builder builder) {
    return new JdkHttpClientBuilder(builder).build();
  }

  /** The cloud's endpoints, with the resource-manager endpoint replaced when the settings give one. */
  static AzureEnvironment environment(AzureSettings settings) {
    AzureEnvironment base = switch (settings.cloud()) {
      case AZURE_US_GOVERNMENT -> AzureEnvironment.AZURE_US_GOVERNMENT;
      case AZURE_CHINA -> AzureEnvironment.AZURE_CHINA;
      default -> AzureEnvironment.AZURE;
    };
    if (settings.endpoint() == null) {
      return base;
    }
    // a copy of every endpoint: the compute manager dereferences more than the resource manager's
    Map<String, String> endpoints = new HashMap<>(base.getEndpoints());
    endpoints.put("resourceManagerEndpointUrl", settings.endpoint().toString());
    return new AzureEnvironment(endpoints);
  }

  /**
   * Workload identity (when {@code AZURE_FEDERATED_TOKEN_FILE} is set: AKS' webhook, OpenShift's
   * short-lived credentials), then managed identity, then the old operator's service principal from
   * its Secret, in that order.
   */
  public static TokenCredential credential(AzureSettings settings) {
    ChainedTokenCredentialBuilder chain = new ChainedTokenCredentialBuilder();
    String authority = switch (settings.cloud()) {
      case AZURE_US_GOVERNMENT -> AzureAuthorityHosts.AZURE_GOVERNMENT;
      case AZURE_CHINA -> AzureAuthorityHosts.AZURE_CHINA;
      default -> AzureAuthorityHosts.AZURE_PUBLIC_CLOUD;
    };
    String tokenFile = System.getenv("AZURE_FEDERATED_TOKEN_FILE");
    if (tokenFile != null && !tokenFile.isBlank()) {
      chain.addLast(new WorkloadIdentityCredentialBuilder().authorityHost(authority).build());
    }
    chain.addLast(new ManagedIdentityCredentialBuilder().build());
    AzureSettings.ClientSecret s = settings.clientSecret();
    if (s != null) {
      chain.addLast(new ClientSecretCredentialBuilder().authorityHost(authority).tenantId(s.tenantId())
          .clientId(s.clientId()).clientSecret(s.secret()).build());
    }
    return chain.build();
  }
}
