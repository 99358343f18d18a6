package org.ipamoperators.keepalived;

/**
 * Operator-wide settings of the keepalived feature: the images of the generated pods, without registry host (the
 * cluster's registry mirror or pull configuration decides where they come from).
 *
 * @param keepalivedImage image of a group's keepalived container when the group names none ({@code image})
 * @param reloaderImage image of the config-setup and config-reloader containers: the suite's {@code ipam} image,
 *     which runs {@code ipam keepalived-reloader} (it needs {@code keepalived} on its PATH for the config check)
 * @param routerIdGrace how long the router id of an instance that is gone stays taken before it is released: long
 *     enough for every node to load a configuration without it (kubelet syncs mounted ConfigMaps within about a
 *     minute); zero releases at once
 */
public record KeepalivedSettings(String keepalivedImage, String reloaderImage, java.time.Duration routerIdGrace) {
  public static final java.time.Duration DEFAULT_ROUTER_ID_GRACE = java.time.Duration.ofSeconds(90);
  public static final String DEFAULT_KEEPALIVED_IMAGE = "ipam-operators/keepalived:0.1.0";
  public static final String DEFAULT_RELOADER_IMAGE = "ipam-operators/ipam:0.1.0";

  public KeepalivedSettings {
    if (keepalivedImage == null || keepalivedImage.isBlank() || reloaderImage == null || reloaderImage.isBlank()) {
      throw new IllegalArgumentException("keepalived and reloader images must be set");
    }
    if (routerIdGrace == null || routerIdGrace.isNegative()) {
      throw new IllegalArgumentException("routerIdGrace must be zero or more");
    }
  }

  /**
   * From system properties {@code ipam.keepalived.image} and {@code ipam.keepalived.reloaderImage}, else the
   * environment ({@code IPAM_KEEPALIVED_IMAGE}, {@code IPAM_KEEPALIVED_RELOADER_IMAGE}), else the defaults; the
   * grace from {@code ipam.keepalived.routerIdGraceSeconds} / {@code IPAM_KEEPALIVED_ROUTER_ID_GRACE_SECONDS}.
   */
  public static KeepalivedSettings fromEnvironment() {
    return new KeepalivedSettings(
        setting("ipam.keepalived.image", "IPAM_KEEPALIVED_IMAGE", DEFAULT_KEEPALIVED_IMAGE),
        setting("ipam.keepalived.reloaderImage", "IPAM_KEEPALIVED_RELOADER_IMAGE", DEFAULT_RELOADER_IMAGE),
        java.time.Duration.ofSeconds(Long.parseLong(setting("ipam.keepalived.routerIdGraceSeconds",
            "IPAM_KEEPALIVED_ROUTER_ID_GRACE_SECONDS", Long.toString(DEFAULT_ROUTER_ID_GRACE.toSeconds())))));
  }

  private static String setting(String property, String env, String fallback) {
    String v = System.getProperty(property, System.getenv(env));
    return v == null || v.isBlank() ? fallback : v.trim();
  }
}
