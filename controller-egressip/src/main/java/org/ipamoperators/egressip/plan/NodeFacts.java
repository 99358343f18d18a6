package org.ipamoperators.egressip.plan;

import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.failover.HealthObservation;

/**
 * A node as read from the cluster and the platform, before any policy: its labels, the raw value
 * of its capacity annotation (null when absent), its latest readiness, its own addresses (node
 * addresses and SDN host address), the egress IPs SDN says it hosts, whether it names a cloud
 * instance, and what the cloud said of its interface (null when it was not asked).
 */
public record NodeFacts(String name, Map<String, String> labels, String capacityAnnotation,
    HealthObservation readiness, Set<Ip> ownAddresses, Set<Ip> sdnHosting, boolean hasProviderId,
    CloudView cloud) {

  /**
   * The node's interface as the cloud described it, or the reason it could not; {@code unknown}
   * when the failure may pass (throttling, 5xx), so the interface may still hold addresses of ours.
   * {@code marked}: the secondaries the cloud module marked as ours on the interface (tags, names).
   */
  public record CloudView(Set<Ip> secondaries, int capacity, String problem, boolean unknown, Set<Ip> marked) {
    public CloudView(Set<Ip> secondaries, int capacity) {
      this(secondaries, capacity, null, false, Set.of());
    }

    public CloudView(Set<Ip> secondaries, int capacity, Set<Ip> marked) {
      this(secondaries, capacity, null, false, marked);
    }

    public CloudView(Set<Ip> secondaries, int capacity, String problem, boolean unknown) {
      this(secondaries, capacity, problem, unknown, Set.of());
    }

    /** A node the cloud could not describe; {@code retryable}: what its interface holds is unknown. */
    public static CloudView failed(String problem, boolean retryable) {
      return new CloudView(Set.of(), 0, problem, retryable);
    }
  }
}
