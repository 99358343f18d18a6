package org.ipamoperators.egressip.plan;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.failover.NodeVerdict;

/**
 * One reconcile's decision about an EgressIPAM, beyond the allocation plan: what the node policy
 * made of each node, what the controller must remember for the next pass, and what it must hold
 * back or report.
 *
 * @param plan the allocation and placement plan
 * @param verdicts each node's failover verdict
 * @param failureHistory when each node last counted as failed (the input of the next decision)
 * @param nodes the nodes as the planner used them (capacity after sharing and suspicion)
 * @param attached our claimed addresses the cloud shows on some node's interface now
 * @param attachmentsUnknown a node's interface could not be read for a reason that may pass, so an
 *     address not in {@code attached} may still be on it
 * @param deferred namespaces whose new addresses wait for a CIDR whose usage could not be read,
 *     with that CIDR
 * @param platformProblems what the platform could not tell (one message each)
 * @param capacityProblems nodes whose capacity annotation is unusable, with the message
 * @param nextReview when a node's verdict changes by itself (null: no such time)
 * @param memory what the next decision may reuse (a cache of this one, not allocation state)
 * @param reused namespaces whose decision was reused from the previous one
 * @param placementReused whether the placement was
 * @param orphans orphans (see {@link Orphans}) due to be taken off now, and the sightings to keep
 */
public record EgressDecision(EgressPlan plan, Map<String, NodeVerdict> verdicts, Map<String, Instant> failureHistory,
    List<NodeInfo> nodes, Set<Ip> attached, boolean attachmentsUnknown, Map<String, IpRange> deferred, List<String> platformProblems,
    Map<String, String> capacityProblems, Duration nextReview, EgressPlanner.Memory memory, int reused,
    boolean placementReused, Orphans.Result orphans) {}
