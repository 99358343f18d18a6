package org.ipamoperators.core.spi;

import java.util.Locale;
import java.util.Objects;

/**
 * One setting a {@link NodeNetworkProvider} reads, such as {@code aws.region}.
 *
 * @param key dotted lower-case key, such as {@code aws.region}
 * @param description what the setting does and its default, one sentence
 */
public record ProviderSetting(String key, String description) {

  /**
   * Checks the key.
   *
   * @param key dotted lower-case key
   * @param description what the setting does
   */
  public ProviderSetting {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(description, "description");
    if (!key.matches("[a-z0-9]+([.-][a-z0-9]+)*")) {
      throw new IllegalArgumentException("a setting key is dotted lower case (such as aws.region), was '" + key + "'");
    }
  }

  /**
   * The system property that set it in earlier versions; the controllers no longer read it.
   *
   * @return {@code ipam.} followed by the key
   * @deprecated settings come from the operator's options or {@link #environmentVariable()}; kept so
   *     that code written against the earlier API still compiles
   */
  @Deprecated(since = "0.1.0", forRemoval = true)
  public String systemProperty() {
    return "ipam." + key;
  }

  /**
   * The environment variable that sets it when the operator is given no value for it.
   *
   * @return {@code IPAM_} followed by the key in upper case, dots and dashes as underscores
   */
  public String environmentVariable() {
    return "IPAM_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }
}
