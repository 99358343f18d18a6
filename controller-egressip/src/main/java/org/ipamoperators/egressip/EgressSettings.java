package org.ipamoperators.egressip;

import java.time.Duration;
import org.ipamoperators.egressip.plan.Orphans;

/**
 * The EgressIPAM controller's settings, read once when it is made.
 *
 * @param platform the platform type when no Infrastructure object names it (null: read the cluster's)
 * @param writers namespaces and network objects written in parallel
 * @param fullPlanEvery how often a pass also plans in full and compares with the incremental plan
 * @param incremental whether passes plan only what changed (off: every pass plans in full)
 * @param orphanGrace how long an address left on an interface must be seen before it is taken off
 */
public record EgressSettings(String platform, int writers, Duration fullPlanEvery, boolean incremental,
    Orphans.Grace orphanGrace) {

  /**
   * From the system properties {@code ipam.platform} (else the environment's {@code IPAM_PLATFORM}),
   * {@code ipam.egressip.writers} (8), {@code ipam.egressip.fullPlanSeconds} (300), {@code
   * ipam.egressip.incremental} (true), {@code ipam.egressip.orphanGraceSeconds} (30) and {@code
   * ipam.egressip.orphanGracePasses} (2); {@code ipam operator}'s options set them.
   */
  public static EgressSettings fromEnvironment() {
    return new EgressSettings(System.getProperty("ipam.platform", System.getenv("IPAM_PLATFORM")),
        Integer.getInteger("ipam.egressip.writers", 8),
        Duration.ofSeconds(Long.getLong("ipam.egressip.fullPlanSeconds", 300)),
        !"false".equals(System.getProperty("ipam.egressip.incremental")),
        new Orphans.Grace(Duration.ofSeconds(Long.getLong("ipam.egressip.orphanGraceSeconds", 30)),
            Integer.getInteger("ipam.egressip.orphanGracePasses", 2)));
  }

  /** The same settings with another orphan grace. */
  public EgressSettings withOrphanGrace(Duration minimum, int passes) {
    return new EgressSettings(platform, writers, fullPlanEvery, incremental, new Orphans.Grace(minimum, passes));
  }
}
