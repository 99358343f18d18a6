package org.ipamoperators.egressip;

import java.time.Duration;
import java.util.Map;
import org.ipamoperators.egressip.cloud.CloudSettings;
import org.ipamoperators.egressip.plan.Orphans;

/**
 * The EgressIPAM controller's settings, read once when it is made. {@code ipam operator} builds them from its
 * options ({@code --platform}, {@code --egressip-writers}...), each defaulting to the environment variable named
 * here; embedders take {@link #fromEnvironment()} or {@link #defaults()}.
 *
 * @param platform the platform type when no Infrastructure object names it (null: read the cluster's)
 * @param writers namespaces and network objects written in parallel
 * @param fullPlanEvery how often a pass also plans in full and compares with the incremental plan
 * @param incremental whether passes plan only what changed (off: every pass plans in full)
 * @param orphanGrace how long an address left on an interface must be seen before it is taken off
 * @param cloud the NodeNetwork providers' settings (region, endpoint, credentials' namespace, provider)
 */
public record EgressSettings(String platform, int writers, Duration fullPlanEvery, boolean incremental,
    Orphans.Grace orphanGrace, CloudSettings cloud) {
  public static final String PLATFORM = "IPAM_PLATFORM";
  public static final String WRITERS = "IPAM_EGRESSIP_WRITERS";
  public static final String FULL_PLAN_SECONDS = "IPAM_EGRESSIP_FULL_PLAN_SECONDS";
  public static final String INCREMENTAL = "IPAM_EGRESSIP_INCREMENTAL";
  public static final String ORPHAN_GRACE_SECONDS = "IPAM_EGRESSIP_ORPHAN_GRACE_SECONDS";
  public static final String ORPHAN_GRACE_PASSES = "IPAM_EGRESSIP_ORPHAN_GRACE_PASSES";

  public EgressSettings {
    platform = platform == null || platform.isBlank() ? null : platform.trim();
    if (writers < 1) {
      throw new IllegalArgumentException(WRITERS + " must be 1 or more, was " + writers);
    }
    if (fullPlanEvery == null || fullPlanEvery.isNegative() || fullPlanEvery.isZero()) {
      throw new IllegalArgumentException(FULL_PLAN_SECONDS + " must be 1 or more, was " + fullPlanEvery);
    }
    orphanGrace = orphanGrace == null ? Orphans.Grace.DEFAULT : orphanGrace;
    cloud = cloud == null ? new CloudSettings(Map.of(), null, null) : cloud;
  }

  /** The platform read from the cluster, 8 writers, a full plan every 5 minutes, incremental passes, a 30 s grace. */
  public static EgressSettings defaults() {
    return new EgressSettings(null, 8, Duration.ofSeconds(300), true, Orphans.Grace.DEFAULT,
        new CloudSettings(Map.of(), null, null));
  }

  /**
   * From the environment variables {@value #PLATFORM}, {@value #WRITERS} (8), {@value #FULL_PLAN_SECONDS} (300),
   * {@value #INCREMENTAL} (true), {@value #ORPHAN_GRACE_SECONDS} (30) and {@value #ORPHAN_GRACE_PASSES} (2),
   * the cloud settings from theirs ({@link CloudSettings#fromEnvironment()}); a bad one throws, naming its variable.
   */
  public static EgressSettings fromEnvironment() {
    return from(System.getenv(), CloudSettings.fromEnvironment());
  }

  /** From values keyed by the environment variables' names. */
  public static EgressSettings from(Map<String, String> env, CloudSettings cloud) {
    return new EgressSettings(env.get(PLATFORM), number(env, WRITERS, 8),
        Duration.ofSeconds(number(env, FULL_PLAN_SECONDS, 300)), !"false".equalsIgnoreCase(trimmed(env, INCREMENTAL)),
        new Orphans.Grace(Duration.ofSeconds(number(env, ORPHAN_GRACE_SECONDS, 30)),
            number(env, ORPHAN_GRACE_PASSES, 2)), cloud);
  }

  private static int number(Map<String, String> env, String name, int fallback) {
    String v = trimmed(env, name);
    if (v == null) {
      return fallback;
    }
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " '" + v + "' is not a whole number", e);
    }
  }

  private static String trimmed(Map<String, String> env, String name) {
    String v = env.get(name);
    return v == null || v.isBlank() ? null : v.trim();
  }

  /** The same settings with another orphan grace. */
  public EgressSettings withOrphanGrace(Duration minimum, int passes) {
    return new EgressSettings(platform, writers, fullPlanEvery, incremental, new Orphans.Grace(minimum, passes), cloud);
  }

  /** The same settings with another platform (null: read the cluster's). */
  public EgressSettings withPlatform(String type) {
    return new EgressSettings(type, writers, fullPlanEvery, incremental, orphanGrace, cloud);
  }

  /** The same settings with other cloud settings. */
  public EgressSettings withCloud(CloudSettings settings) {
    return new EgressSettings(platform, writers, fullPlanEvery, incremental, orphanGrace, settings);
  }
}
