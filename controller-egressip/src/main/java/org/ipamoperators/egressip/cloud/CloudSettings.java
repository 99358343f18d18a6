package org.ipamoperators.egressip.cloud;

import java.util.Map;
import org.ipamoperators.core.spi.ProviderSetting;

/**
 * Operator settings for NodeNetwork providers. Each provider setting (such as {@code aws.region})
 * comes from {@code overrides} (tests), else the system property {@code ipam.<key>}, else the
 * environment variable {@code IPAM_<KEY>}. {@code operatorNamespace} holds the Secrets providers
 * read ({@code ipam.operator.namespace} / {@code IPAM_OPERATOR_NAMESPACE}, else the client's
 * namespace); {@code provider} names the provider to use when several serve the platform, or to
 * use whatever the platform ({@code ipam.node-network-provider} / {@code IPAM_NODE_NETWORK_PROVIDER}).
 */
public record CloudSettings(Map<String, String> overrides, String operatorNamespace, String provider) {
  /** The setting that names the provider. */
  public static final String PROVIDER_ENV = "IPAM_NODE_NETWORK_PROVIDER";

  public CloudSettings {
    overrides = Map.copyOf(overrides);
  }

  public static CloudSettings fromEnvironment() {
    return new CloudSettings(Map.of(), setting("ipam.operator.namespace", "IPAM_OPERATOR_NAMESPACE"),
        setting("ipam.node-network-provider", PROVIDER_ENV));
  }

  /** The value of a provider's setting, or null. */
  public String value(ProviderSetting s) {
    String v = overrides.get(s.key());
    return v != null ? v : setting(s.systemProperty(), s.environmentVariable());
  }

  private static String setting(String property, String env) {
    String v = System.getProperty(property, System.getenv(env));
    return v == null || v.isBlank() ? null : v.trim();
  }
}
