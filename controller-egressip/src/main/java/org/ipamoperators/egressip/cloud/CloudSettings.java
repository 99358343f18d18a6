package org.ipamoperators.egressip.cloud;

import java.util.Map;
import org.ipamoperators.core.spi.ProviderSetting;

/**
 * Operator settings for NodeNetwork providers. Each provider setting (such as {@code aws.region})
 * comes from {@code overrides} ({@code ipam operator}'s options, tests), else the environment variable
 * {@code IPAM_<KEY>} ({@link ProviderSetting#environmentVariable()}). {@code operatorNamespace} holds the Secrets
 * providers read ({@code IPAM_OPERATOR_NAMESPACE}, else the client's namespace); {@code provider} names the
 * provider to use when several serve the platform, or to use whatever the platform
 * ({@code IPAM_NODE_NETWORK_PROVIDER}).
 */
public record CloudSettings(Map<String, String> overrides, String operatorNamespace, String provider) {
  /** The setting that names the provider. */
  public static final String PROVIDER_ENV = "IPAM_NODE_NETWORK_PROVIDER";
  /** The setting that names the namespace of the providers' Secrets. */
  public static final String OPERATOR_NAMESPACE_ENV = "IPAM_OPERATOR_NAMESPACE";

  public CloudSettings {
    overrides = Map.copyOf(overrides);
    operatorNamespace = blankToNull(operatorNamespace);
    provider = blankToNull(provider);
  }

  /** No overrides; the namespace and provider from {@value #OPERATOR_NAMESPACE_ENV} and {@value #PROVIDER_ENV}. */
  public static CloudSettings fromEnvironment() {
    return new CloudSettings(Map.of(), System.getenv(OPERATOR_NAMESPACE_ENV), System.getenv(PROVIDER_ENV));
  }

  /** The value of a provider's setting, or null. */
  public String value(ProviderSetting s) {
    String v = overrides.get(s.key());
    return v != null ? v : blankToNull(System.getenv(s.environmentVariable()));
  }

  private static String blankToNull(String v) {
    return v == null || v.isBlank() ? null : v.trim();
  }
}
