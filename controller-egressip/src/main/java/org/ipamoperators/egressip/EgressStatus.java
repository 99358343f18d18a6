package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.kube.Conditions;
import org.ipamoperators.core.failover.NodeVerdict;
import org.ipamoperators.core.placement.Change;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.pool.PoolOverlaps;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.CidrStatus;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.api.EgressIPAMStatus;
import org.ipamoperators.egressip.network.NetworkType;
import org.ipamoperators.egressip.network.Platform;
import org.ipamoperators.egressip.plan.EgressPlan;
import org.ipamoperators.egressip.plan.EgressPolicy;
import org.ipamoperators.egressip.plan.NamespaceProblem;
import org.ipamoperators.egressip.plan.NodeInfo;

/** The report step of a pass: the EgressIPAM's status and its metrics, pure but for the meters. */
final class EgressStatus {
  private EgressStatus() {}

  static final String KIND = "EgressIPAM";

  /** An EgressIPAM as one owner of ranges among all of them (see {@link PoolOverlaps}). */
  static PoolOverlaps.Owner poolOwner(EgressIPAM ipam) {
    String created = ipam.getMetadata().getCreationTimestamp();
    return new PoolOverlaps.Owner(KIND, ipam.getMetadata().getName(), created == null ? null : Instant.parse(created),
        EgressPolicy.parsableCidrs(ipam.getSpec()));
  }

  /** The status of an IPAM refused for overlapping an older one: Ready false, saying which and where. */
  static EgressIPAM refused(EgressIPAM ipam, PoolOverlaps.Refusal refusal) {
    EgressIPAMStatus old = ipam.getStatus();
    Long generation = ipam.getMetadata().getGeneration();
    var conditions = Conditions.set(old == null ? null : old.conditions(), "Ready", false, "OverlappingCIDRs",
        refusal.message() + "; this EgressIPAM serves nothing until its CIDRs overlap no older EgressIPAM's",
        generation);
    conditions = Conditions.set(conditions, "Degraded", true, "OverlappingCIDRs", refusal.message(), generation);
    EgressIPAM patch = new EgressIPAM();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(ipam.getMetadata().getName());
    patch.setMetadata(meta);
    patch.setStatus(old == null
        ? new EgressIPAMStatus(conditions, generation, null, 0, 0, 0, 0, null, null)
        : new EgressIPAMStatus(conditions, generation, old.cidrs(), old.assignedNamespaces(), old.pendingNamespaces(),
            old.rejectedNamespaces(), old.unplaceableIPs(), old.networkType(), old.platform()));
    return patch;
  }

  /** The status patch, or no write at all when the status would not change. */
  static UpdateControl<EgressIPAM> patchIfChanged(EgressIPAM ipam, EgressIPAM patch, Duration next) {
    UpdateControl<EgressIPAM> control = Objects.equals(patch.getStatus(), ipam.getStatus())
        ? UpdateControl.noUpdate() : UpdateControl.patchStatus(patch);
    return next == null ? control : control.rescheduleAfter(next);
  }

  /** The IPAM's gauges after a pass, and a failover duration for each address moved off a failed node. */
  static void recordMetrics(EgressMetrics metrics, EgressIPAM ipam, EgressPlan plan, List<NodeInfo> nodeInfos,
      Map<String, NodeVerdict> verdicts, Instant now) {
    String name = ipam.getMetadata().getName();
    var round = metrics.round(name);
    Set<String> labelValues = ipam.getSpec().cidrs().stream().map(CIDRAssignment::labelValue)
        .collect(Collectors.toSet());
    for (NodeInfo n : nodeInfos) {
      if (!n.selected() || n.topologyValue() == null || !labelValues.contains(n.topologyValue())) {
        continue;
      }
      double capacity = n.capacity() == NodeState.UNLIMITED ? Double.POSITIVE_INFINITY : n.capacity() + 1;
      int hosted = plan.placement().assignments().getOrDefault(n.name(), new TreeSet<>()).size();
      // Each under its name and the old operator's, which existing alerts use.
      for (String prefix : EgressMetrics.NODE_GAUGE_PREFIXES) {
        round.gauge(prefix + "ip_capacity", "Egress IPs a node can hold, its own address included",
            capacity, "node", n.name());
        round.gauge(prefix + "ip_allocated", "Egress IPs placed on a node, its own address included",
            hosted + 1, "node", n.name());
      }
    }
    for (EgressPlan.CidrUsage u : plan.usage()) {
      round.gauge("ipam_egressip_cidr_capacity", "Usable addresses of a CIDR", u.capacity().doubleValue(), "cidr", u.cidr());
      round.gauge("ipam_egressip_cidr_allocated", "Addresses of a CIDR held by namespaces", u.allocated().doubleValue(), "cidr", u.cidr());
      round.gauge("ipam_egressip_cidr_free", "Free addresses of a CIDR", u.free().doubleValue(), "cidr", u.cidr());
    }
    long rejected = plan.problems().stream().filter(NamespaceProblem::rejected).count();
    round.gauge("ipam_egressip_namespaces", "Opted-in namespaces by state", plan.served().size(), "state", "assigned");
    round.gauge("ipam_egressip_namespaces", "Opted-in namespaces by state", plan.problems().size() - rejected, "state", "pending");
    round.gauge("ipam_egressip_namespaces", "Opted-in namespaces by state", rejected, "state", "rejected");
    round.gauge("ipam_egressip_unplaceable_ips", "Addresses no node can host now", plan.placement().unplaceable().size());
    round.close();
    for (var change : plan.placement().changes(Change.Kind.MOVE)) {
      NodeVerdict v = verdicts.get(change.from());
      if (v != null && v.failed()) {
        metrics.failover(name, Duration.between(v.since(), now));
      }
    }
  }

  /** The status a pass leaves: Ready, Degraded with counts, each CIDR's usage. */
  static EgressIPAM status(EgressIPAM ipam, NetworkType network, Platform platform, EgressPlan plan, boolean ready,
      String reason, String message, List<String> failures, Map<String, String> capacityProblems) {
    EgressIPAMStatus old = ipam.getStatus();
    Long generation = ipam.getMetadata().getGeneration();
    var conditions = Conditions.set(old == null ? null : old.conditions(), "Ready", ready, reason, message, generation);
    long rejected = plan.problems().stream().filter(NamespaceProblem::rejected).count();
    long pending = plan.problems().size() - rejected;
    int unplaceable = plan.placement().unplaceable().size();
    boolean degraded = rejected > 0 || pending > 0 || unplaceable > 0 || !failures.isEmpty()
        || !capacityProblems.isEmpty();
    String degradedMessage = degraded ? String.format(
        "%d namespace(s) rejected, %d pending, %d address(es) unplaceable%s%s", rejected, pending, unplaceable,
        failures.isEmpty() ? "" : ", " + failures.size() + " network write(s) failed",
        capacityProblems.isEmpty() ? "" : "; " + String.join("; ", capacityProblems.values())) : "";
    conditions = Conditions.set(conditions, "Degraded", degraded,
        degraded ? (rejected > 0 ? "NamespacesRejected" : pending > 0 ? "NamespacesPending"
            : unplaceable > 0 ? "Unplaceable" : !failures.isEmpty() ? "NetworkWriteFailed" : "InvalidNodeCapacity")
            : "AsExpected", degradedMessage, generation);
    List<CidrStatus> cidrs = plan.usage().stream().map(u -> new CidrStatus(u.cidr(), u.capacity().toString(),
        u.allocated().toString(), u.free().toString())).toList();
    EgressIPAM patch = new EgressIPAM();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(ipam.getMetadata().getName());
    patch.setMetadata(meta);
    patch.setStatus(new EgressIPAMStatus(conditions, generation, plan.specValid() ? cidrs : null,
        plan.served().size(), (int) pending, (int) rejected, unplaceable, network.display(), platform.type()));
    return patch;
  }
}
