package org.ipamoperators.egressip.cloud;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.cloud.azure.AzureContext;
import org.ipamoperators.cloud.azure.AzureNodeNetwork;
import org.ipamoperators.cloud.azure.AzureSettings;
import org.ipamoperators.cloud.azure.LoadBalancerPolicy;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.egressip.network.Platform;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Azure network for platform {@code Azure}: the subscription from the setting, else the old
 * operator's Secret ({@code azure_subscription_id}), else a node's {@code spec.providerID}; the
 * resource groups from the setting, else Infrastructure's {@code status.platformStatus.azure}
 * ({@code resourceGroupName}, {@code networkResourceGroupName}), else the Secret's
 * {@code azure_resourcegroup}; the cloud from Infrastructure's {@code cloudName}; the service
 * principal from the Secret when it has one. The network is kept while these stay the same. Secret
 * values are never logged.
 */
public final class AzureNetworks {
  private static final Logger LOG = LoggerFactory.getLogger(AzureNetworks.class);
  private static final Pattern SUBSCRIPTION = Pattern.compile("^azure:///subscriptions/([^/]+)/resourceGroups/([^/]+)/",
      Pattern.CASE_INSENSITIVE);

  /** Settings from the environment: {@code IPAM_AZURE_SUBSCRIPTION_ID}, {@code IPAM_AZURE_RESOURCE_GROUP},
   * {@code IPAM_AZURE_NETWORK_RESOURCE_GROUP}, {@code IPAM_AZURE_ENDPOINT} (or the {@code ipam.azure.*} properties). */
  public record Overrides(String subscriptionId, String resourceGroup, String networkResourceGroup, URI endpoint) {
    public static Overrides fromEnvironment() {
      String endpoint = setting("ipam.azure.endpoint", "IPAM_AZURE_ENDPOINT");
      return new Overrides(setting("ipam.azure.subscriptionId", "IPAM_AZURE_SUBSCRIPTION_ID"),
          setting("ipam.azure.resourceGroup", "IPAM_AZURE_RESOURCE_GROUP"),
          setting("ipam.azure.networkResourceGroup", "IPAM_AZURE_NETWORK_RESOURCE_GROUP"),
          endpoint == null ? null : URI.create(endpoint));
    }

    private static String setting(String property, String env) {
      String v = System.getProperty(property, System.getenv(env));
      return v == null || v.isBlank() ? null : v.trim();
    }
  }

  private final KubernetesClient client;
  private final String operatorNamespace;
  private final Overrides overrides;
  private final Function<AzureSettings, AzureNodeNetwork> factory;
  private AzureSettings current;
  private AzureNodeNetwork network;

  public AzureNetworks(KubernetesClient client, String operatorNamespace, Overrides overrides,
      Function<AzureSettings, AzureNodeNetwork> factory) {
    this.client = client;
    this.operatorNamespace = operatorNamespace;
    this.overrides = overrides;
    this.factory = factory;
  }

  public static AzureNetworks fromEnvironment(KubernetesClient client, String operatorNamespace) {
    return fromEnvironment(client, operatorNamespace, io.micrometer.core.instrument.Metrics.globalRegistry);
  }

  /** The production network: the JDK HTTP client, the credential chain, Azure's metrics in {@code registry}. */
  public static AzureNetworks fromEnvironment(KubernetesClient client, String operatorNamespace,
      io.micrometer.core.instrument.MeterRegistry registry) {
    return new AzureNetworks(client, operatorNamespace, Overrides.fromEnvironment(), s -> AzureNodeNetwork.create(s,
        org.ipamoperators.cloud.azure.AzureClients.credential(s), org.ipamoperators.cloud.azure.AzureClients
        .jdkHttpClient(), registry));
  }

  /** The Azure network with the load-balancer policy of an EgressIPAM (its old annotation); others unchanged. */
  public static NodeNetwork forIpam(NodeNetwork network, HasMetadata ipam) {
    if (network instanceof AzureNodeNetwork azure) {
      Map<String, String> a = ipam.getMetadata().getAnnotations();
      return azure.withLoadBalancerPolicy(LoadBalancerPolicy.fromAnnotation(a == null ? null
          : a.get(LoadBalancerPolicy.ANNOTATION)));
    }
    return network;
  }

  public synchronized NodeNetworks.Selection select(Platform platform, NodeNetwork fallback) {
    AzureSettings wanted;
    try {
      wanted = settings();
    } catch (RuntimeException e) {
      return new NodeNetworks.Selection(fallback, e.getMessage());
    }
    if (!wanted.equals(current)) {
      if (network != null) {
        network.close();
      }
      LOG.info("Azure subscription {}, resource group {} (networks in {}), {}{}, credentials: {}",
          wanted.subscriptionId(), wanted.resourceGroup(), wanted.vnetResourceGroup(), wanted.cloud(),
          wanted.endpoint() == null ? "" : " at " + wanted.endpoint(), wanted.clientSecret() == null
          ? "workload or managed identity" : "workload or managed identity, then Secret " + CloudSettings.CREDENTIALS_SECRET);
      network = factory.apply(wanted);
      current = wanted;
    }
    return new NodeNetworks.Selection(network, null);
  }

  AzureSettings settings() {
    Map<String, String> attributes = new java.util.HashMap<>();
    infrastructureAzure().forEach((k, v) -> {
      if (k instanceof String key && v instanceof String value) {
        attributes.put(key, value);
      }
    });
    Map<String, String> secret = secret();
    boolean needSubscription = overrides.subscriptionId() == null && secret.get("azure_subscription_id") == null;
    boolean needGroup = overrides.resourceGroup() == null && attributes.get(AzureContext.RESOURCE_GROUP) == null;
    for (Node n : needSubscription || needGroup ? client.nodes().list().getItems() : List.<Node>of()) {
      String pid = n.getSpec() == null ? null : n.getSpec().getProviderID();
      Matcher m = pid == null ? null : SUBSCRIPTION.matcher(pid);
      if (m != null && m.find()) {
        attributes.put(AzureContext.SUBSCRIPTION, m.group(1));
        attributes.putIfAbsent(AzureContext.RESOURCE_GROUP, m.group(2));
        break;
      }
    }
    Map<String, String> settings = new java.util.HashMap<>();
    putNonBlank(settings, AzureContext.SETTING_SUBSCRIPTION, overrides.subscriptionId());
    putNonBlank(settings, AzureContext.SETTING_RESOURCE_GROUP, overrides.resourceGroup());
    putNonBlank(settings, AzureContext.SETTING_NETWORK_RESOURCE_GROUP, overrides.networkResourceGroup());
    putNonBlank(settings, AzureContext.SETTING_ENDPOINT, overrides.endpoint() == null ? null
        : overrides.endpoint().toString());
    try {
      return AzureContext.resolve(attributes, settings, secret);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  private Map<?, ?> infrastructureAzure() {
    try {
      GenericKubernetesResource infra = client.genericKubernetesResources("config.openshift.io/v1", "Infrastructure")
          .withName("cluster").get();
      if (infra != null && infra.getAdditionalProperties().get("status") instanceof Map<?, ?> st
          && st.get("platformStatus") instanceof Map<?, ?> ps && ps.get("azure") instanceof Map<?, ?> az) {
        return az;
      }
    } catch (KubernetesClientException e) {
      // not OpenShift: the settings must say
    }
    return Map.of();
  }

  private Map<String, String> secret() {
    String ns = operatorNamespace != null ? operatorNamespace : client.getNamespace();
    if (ns == null) {
      return Map.of();
    }
    Secret s;
    try {
      s = client.secrets().inNamespace(ns).withName(CloudSettings.CREDENTIALS_SECRET).get();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 403) {
        return Map.of();
      }
      throw new IllegalStateException("cannot read Secret " + ns + "/" + CloudSettings.CREDENTIALS_SECRET + ": "
          + e.getMessage(), e);
    }
    if (s == null) {
      return Map.of();
    }
    Map<String, String> out = new java.util.HashMap<>();
    if (s.getStringData() != null) {
      s.getStringData().forEach((k, v) -> putNonBlank(out, k, v));
    }
    if (s.getData() != null) {
      s.getData().forEach((k, v) -> putNonBlank(out, k, v == null ? null
          : new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8)));
    }
    return out;
  }

  private static void putNonBlank(Map<String, String> m, String k, String v) {
    if (v != null && !v.isBlank()) {
      m.put(k, v.trim());
    }
  }

  private static String str(Object o) {
    return o instanceof String s && !s.isBlank() ? s : null;
  }

  private static String first(String a, String b, String c) {
    return a != null ? a : b != null ? b : c;
  }
}
