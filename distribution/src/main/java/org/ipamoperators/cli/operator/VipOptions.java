package org.ipamoperators.cli.operator;

import org.ipamoperators.vip.VipSettings;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/** {@code ipam operator}'s settings of the vip controller, each with an environment fallback. */
final class VipOptions {
  @Option(names = "--vip-handle-unclassed", paramLabel = "BOOLEAN", arity = "0..1", fallbackValue = "true",
      description = "vip: serve LoadBalancer Services without spec.loadBalancerClass (env IPAM_VIP_HANDLE_UNCLASSED,"
          + " where anything but false serves them; default: true)")
  Boolean handleUnclassed;

  @Option(names = "--vip-sweep-interval", paramLabel = "DURATION",
      defaultValue = "${env:IPAM_VIP_SWEEP_INTERVAL:-}",
      description = "vip: how often the leader releases the claims of Services that are gone: an ISO-8601 duration"
          + " (PT5M) or seconds (env IPAM_VIP_SWEEP_INTERVAL; default: 5 minutes)")
  String sweepInterval;

  /** The settings; a bad one throws with its option and variable named. */
  VipSettings settings() {
    // The variable keeps its lenient reading (only false turns it off); the option takes true or false.
    boolean unclassed = handleUnclassed != null ? handleUnclassed
        : VipSettings.handleUnclassed(System.getenv(VipSettings.HANDLE_UNCLASSED));
    try {
      return new VipSettings(unclassed, VipSettings.sweepInterval(sweepInterval,
          "--vip-sweep-interval (env " + VipSettings.SWEEP_INTERVAL + ")"));
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
  }
}
