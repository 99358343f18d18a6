package org.ipamoperators.keepalived.config;

import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;

/** A {@link VrrpInstance} the planner wants, before it has a router id; see {@link InstancePlanner}. */
public record PlannedInstance(
    String key,
    IpFamily family,
    SortedSet<Ip> vips,
    Optional<String> owner,
    SortedMap<String, String> verbatim,
    SortedSet<HealthCheck> healthChecks,
    SortedSet<ServiceRef> services) {

  /** This instance under {@code routerId}. */
  public VrrpInstance withRouterId(int routerId) {
    return new VrrpInstance(key, family, routerId, vips, owner, verbatim, healthChecks, services);
  }
}
