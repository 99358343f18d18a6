package org.ipamoperators.keepalived;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.ipamoperators.controller.common.ids.ClusterIdLedger;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.controller.common.ids.IdClaimResult;
import org.ipamoperators.controller.common.ids.IdSpace;
import org.ipamoperators.controller.common.ledger.ClaimOwner;

/**
 * One metrics port per group, held in the cluster's id ledger (an IDClaim in the metrics-port space, retired with the
 * group like its router ids, {@link RouterIds#retireAll}). The group's pods use the host network, so a port shared by two groups would make
 * the second group's pod unschedulable on a node the first one runs on; a port of its own per group never collides,
 * whichever nodes the groups share.
 */
final class MetricsPorts {
  static final String PURPOSE = "metrics";

  /** The group's port, or null with the reason when none is free. */
  record Port(Integer port, String problem) {}

  private final ClusterIdLedger ledger;
  private final IdSpace space;

  MetricsPorts(ClusterIdLedger ledger, IdSpace space) {
    this.ledger = ledger;
    this.space = space;
  }

  Port sync(ClaimOwner owner) {
    Integer kept = null;
    for (IDClaim c : ledger.claimsOf(owner)) {
      if (!space.name().equals(c.getSpec().space())) {
        continue;
      }
      int id = c.getSpec().id();
      if (kept == null && space.contains(id)) {
        kept = id;
        if (ClusterIdLedger.retiredAt(c).isPresent()) {
          ledger.retire(space, id, owner, null); // a group of this name is back within the grace: its port again
        }
      } else {
        ledger.release(c.getMetadata().getName(), owner); // a second one, or outside a narrowed range
      }
    }
    if (kept != null) {
      return new Port(kept, null);
    }
    List<IDClaim> all = ledger.claimsOf(space);
    Set<Integer> taken = new HashSet<>();
    all.forEach(c -> taken.add(c.getSpec().id()));
    IdClaimResult r = taken.size() >= space.size()
        ? new IdClaimResult(IdClaimResult.Outcome.EXHAUSTED, java.util.OptionalInt.empty(), owner)
        : ledger.claimLowestNotIn(space, PURPOSE, owner, taken);
    if (r.ours()) {
      return new Port(r.id().getAsInt(), null);
    }
    return new Port(null, "every metrics port of " + space.min() + "-" + space.max()
        + " is held by another group (--keepalived-metrics-ports): this group's pods serve no metrics");
  }
}
