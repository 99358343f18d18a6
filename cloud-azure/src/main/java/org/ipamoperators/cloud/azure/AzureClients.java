package org.ipamoperators.cloud.azure;

import com.azure.core.credential.AccessToken;
import com.azure.core.credential.TokenCredential;
import com.azure.core.credential.TokenRequestContext;
import com.azure.core.http.HttpClient;
import com.azure.core.http.HttpPipeline;
import com.azure.core.http.jdk.httpclient.JdkHttpClientBuilder;
import com.azure.core.http.policy.HttpLogDetailLevel;
import com.azure.core.http.policy.HttpLogOptions;
import com.azure.core.http.policy.RetryPolicy;
import com.azure.core.management.AzureEnvironment;
import com.azure.core.management.profile.AzureProfile;
import com.azure.identity.AadCredentialBuilderBase;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Builds the SDK clients: one pipeline (the SDK's standard policies: bearer token, the
 * {@code Retry-After}-aware retry of 408/429/5xx, request ids; plus {@link PutIfMatchPolicy} and
 * {@link NoBodyNoContentLengthPolicy}) on the JDK HTTP client, shared by the network and compute
 * clients, and the credential chain. No netty.
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
   * Where the credentials get their tokens: the cloud's login host, the process environment
   * ({@code AZURE_FEDERATED_TOKEN_FILE}, {@code AZURE_CLIENT_ID}, {@code AZURE_TENANT_ID}), the HTTP
   * client of the token calls (null: the SDK's default), whether Microsoft Entra instance discovery
   * runs, and the managed identity link.
   */
  public record IdentityEnvironment(String authorityHost, Map<String, String> env, HttpClient http,
      boolean instanceDiscovery, Supplier<TokenCredential> managedIdentity) {
    /** The cloud's login host, this process' environment, the VM's managed identity. */
    public static IdentityEnvironment of(AzureSettings settings) {
      String authority = switch (settings.cloud()) {
        case AZURE_US_GOVERNMENT -> AzureAuthorityHosts.AZURE_GOVERNMENT;
        case AZURE_CHINA -> AzureAuthorityHosts.AZURE_CHINA;
        default -> AzureAuthorityHosts.AZURE_PUBLIC_CLOUD;
      };
      return new IdentityEnvironment(authority, System.getenv(), null, true,
          () -> new ManagedIdentityCredentialBuilder().build());
    }

    String federatedTokenFile() {
      String f = env.get("AZURE_FEDERATED_TOKEN_FILE");
      return f == null || f.isBlank() ? null : f;
    }
  }

  /** The chain of {@link #credential(AzureSettings, IdentityEnvironment)} in this process' environment. */
  public static TokenCredential credential(AzureSettings settings) {
    return credential(settings, IdentityEnvironment.of(settings));
  }

  /**
   * The links of {@link AzureSettings#credentialOrder()} that exist, in that order: the Secret's
   * service principal when the Secret gives one, workload identity when a federated token file is
   * set, managed identity always. A link that cannot get a token (no identity endpoint, no file)
   * passes to the next; a link that gets one is used, and an Azure 403 with its token is a failure
   * named with the call, not a reason to try another identity (which identity acts must not depend
   * on which one lacks a role today). A Secret that exists but is refused by Microsoft Entra stops
   * the chain with that error.
   */
  public static TokenCredential credential(AzureSettings settings, IdentityEnvironment id) {
    ChainedTokenCredentialBuilder chain = new ChainedTokenCredentialBuilder();
    for (CredentialKind kind : links(settings, id)) {
      chain.addLast(new NamedCredential(kind, build(kind, settings, id)));
    }
    return chain.build();
  }

  /** The links the chain will have, in order: "client-secret, then managed-identity". */
  public static String describeChain(AzureSettings settings, Map<String, String> env) {
    IdentityEnvironment id = new IdentityEnvironment(null, env, null, true, null);
    return String.join(", then ", links(settings, id).stream().map(CredentialKind::setting).toList());
  }

  private static List<CredentialKind> links(AzureSettings settings, IdentityEnvironment id) {
    return settings.credentialOrder().stream().filter(k -> switch (k) {
      case CLIENT_SECRET -> settings.clientSecret() != null;
      case WORKLOAD_IDENTITY -> id.federatedTokenFile() != null;
      case MANAGED_IDENTITY -> true;
    }).toList();
  }

  private static TokenCredential build(CredentialKind kind, AzureSettings settings, IdentityEnvironment id) {
    return switch (kind) {
      case CLIENT_SECRET -> {
        AzureSettings.ClientSecret s = settings.clientSecret();
        yield aad(new ClientSecretCredentialBuilder().tenantId(s.tenantId()).clientId(s.clientId())
            .clientSecret(s.secret()), id).build();
      }
      case WORKLOAD_IDENTITY -> {
        WorkloadIdentityCredentialBuilder b = new WorkloadIdentityCredentialBuilder()
            .tokenFilePath(id.federatedTokenFile());
        if (id.env().get("AZURE_CLIENT_ID") != null) {
          b.clientId(id.env().get("AZURE_CLIENT_ID"));
        }
        if (id.env().get("AZURE_TENANT_ID") != null) {
          b.tenantId(id.env().get("AZURE_TENANT_ID"));
        }
        yield aad(b, id).build();
      }
      case MANAGED_IDENTITY -> id.managedIdentity().get();
    };
  }

  private static <T extends AadCredentialBuilderBase<T>> T aad(T builder, IdentityEnvironment id) {
    builder.authorityHost(id.authorityHost());
    if (id.http() != null) {
      builder.httpClient(id.http());
    }
    if (!id.instanceDiscovery()) {
      builder.disableInstanceDiscovery();
    }
    return builder;
  }

  /** A link that says, once, when it is the one that gave the token (which identity acts is worth a line). */
  private static final class NamedCredential implements TokenCredential {
    private static final Logger LOG = LoggerFactory.getLogger(AzureClients.class);
    private final CredentialKind kind;
    private final TokenCredential delegate;
    private final AtomicBoolean said = new AtomicBoolean();

    NamedCredential(CredentialKind kind, TokenCredential delegate) {
      this.kind = kind;
      this.delegate = delegate;
    }

    @Override
    public Mono<AccessToken> getToken(TokenRequestContext request) {
      return delegate.getToken(request).doOnNext(t -> {
        if (!said.getAndSet(true)) {
          LOG.info("Azure token from the {} credential", kind.setting());
        }
      });
    }
  }
}
