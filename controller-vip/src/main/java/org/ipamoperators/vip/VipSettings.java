package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Service;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Objects;

/**
 * The VIP controller's settings, read once when it is registered.
 *
 * @param handleUnclassed whether LoadBalancer Services without spec.loadBalancerClass are served (the default, as the
 *     old operator did); off when another load balancer implementation serves them
 * @param sweepInterval how often the leader releases the claims of Services that are gone (see {@link OrphanSweep})
 */
public record VipSettings(boolean handleUnclassed, Duration sweepInterval) {
  /** The environment variable of {@link #handleUnclassed}: anything but {@code false} serves them. */
  public static final String HANDLE_UNCLASSED = "IPAM_VIP_HANDLE_UNCLASSED";
  /** The environment variable of {@link #sweepInterval}: an ISO-8601 duration such as PT5M, or seconds. */
  public static final String SWEEP_INTERVAL = "IPAM_VIP_SWEEP_INTERVAL";
  public static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofMinutes(5);

  public VipSettings {
    Objects.requireNonNull(sweepInterval, "sweepInterval");
    if (sweepInterval.isNegative() || sweepInterval.isZero()) {
      throw new IllegalArgumentException(SWEEP_INTERVAL + ": must be positive, was '" + sweepInterval + "'");
    }
  }

  /** Unclassed Services served, a sweep every 5 minutes. */
  public static VipSettings defaults() {
    return new VipSettings(true, DEFAULT_SWEEP_INTERVAL);
  }

  /** From the environment variables {@value #HANDLE_UNCLASSED} and {@value #SWEEP_INTERVAL}. */
  public static VipSettings fromEnvironment() {
    return from(System.getenv());
  }

  /** From values keyed by the environment variables' names; a bad one throws, naming its variable. */
  public static VipSettings from(Map<String, String> env) {
    return new VipSettings(handleUnclassed(env.get(HANDLE_UNCLASSED)),
        sweepInterval(env.get(SWEEP_INTERVAL), SWEEP_INTERVAL));
  }

  /** Unset or anything but {@code false} (any case) serves unclassed Services. */
  public static boolean handleUnclassed(String value) {
    return value == null || !value.trim().equalsIgnoreCase("false");
  }

  /**
   * An ISO-8601 duration ({@code PT5M}) or a number of seconds; the default when unset. A bad or non-positive one
   * throws with a message that starts with {@code shown} (how the caller lets users set it).
   */
  public static Duration sweepInterval(String value, String shown) {
    if (value == null || value.isBlank()) {
      return DEFAULT_SWEEP_INTERVAL;
    }
    String v = value.trim();
    Duration d;
    try {
      d = v.matches("\\d+") ? Duration.ofSeconds(Long.parseLong(v)) : Duration.parse(v);
    } catch (DateTimeParseException | NumberFormatException e) {
      throw new IllegalArgumentException(shown + ": '" + value
          + "' is neither an ISO-8601 duration (PT5M) nor a number of seconds", e);
    }
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(shown + ": must be positive, was '" + value + "'");
    }
    return d;
  }

  /** Whether the controller serves the Service: a LoadBalancer of its class (or of none, when unclassed are served). */
  public boolean handles(Service s) {
    return VipServices.handles(s, handleUnclassed);
  }
}
