package org.ipamoperators.core.spi;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What a controller knows when it asks a {@link NodeNetworkProvider} for a network: the platform,
 * what the platform reports of itself, the provider's settings and the Secrets it asked for. A value:
 * two equal contexts give equivalent networks. Its text never shows Secret values.
 *
 * @param platform the platform type, such as {@code AWS}
 * @param attributes what the platform reports, such as {@code region} (OpenShift's
 *     {@code Infrastructure} status); keys are the provider's concern
 * @param settings the provider's settings that are set, by {@link ProviderSetting#key()}
 * @param secrets the data of each Secret of {@link NodeNetworkProvider#secrets()} that exists,
 *     decoded, by Secret name
 */
public record ProviderContext(String platform, Map<String, String> attributes, Map<String, String> settings,
    Map<String, Map<String, String>> secrets) {

  /**
   * Copies the maps.
   *
   * @param platform the platform type
   * @param attributes what the platform reports
   * @param settings the settings that are set
   * @param secrets Secret data by Secret name
   */
  public ProviderContext {
    Objects.requireNonNull(platform, "platform");
    attributes = Map.copyOf(attributes);
    settings = Map.copyOf(settings);
    Map<String, Map<String, String>> copy = new TreeMap<>();
    secrets.forEach((name, data) -> copy.put(name, Map.copyOf(data)));
    secrets = Map.copyOf(copy);
  }

  /**
   * A context with the platform alone.
   *
   * @param platform the platform type
   * @return a context without attributes, settings or secrets
   */
  public static ProviderContext of(String platform) {
    return new ProviderContext(platform, Map.of(), Map.of(), Map.of());
  }

  /**
   * A setting's value.
   *
   * @param key the setting's key
   * @return the value, if set and not blank
   */
  public Optional<String> setting(String key) {
    return Optional.ofNullable(settings.get(key)).map(String::trim).filter(v -> !v.isEmpty());
  }

  /**
   * A platform attribute.
   *
   * @param key the attribute's key, such as {@code region}
   * @return the value, if the platform reports it
   */
  public Optional<String> attribute(String key) {
    return Optional.ofNullable(attributes.get(key)).filter(v -> !v.isBlank());
  }

  /**
   * The data of a Secret.
   *
   * @param name the Secret's name
   * @return its data, empty when it is absent or could not be read
   */
  public Map<String, String> secret(String name) {
    return secrets.getOrDefault(name, Map.of());
  }

  /** Platform, attributes and settings; Secret names and keys, never their values. */
  @Override
  public String toString() {
    Map<String, Object> shown = new TreeMap<>();
    secrets.forEach((name, data) -> shown.put(name, new TreeMap<>(data).keySet()));
    return "ProviderContext[platform=" + platform + ", attributes=" + new TreeMap<>(attributes) + ", settings="
        + new TreeMap<>(settings) + ", secrets=" + shown + "]";
  }
}
