package org.ipamoperators.vip;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.pool.Pool;
import org.ipamoperators.core.pool.PoolOverlaps;
import org.ipamoperators.vip.api.IPGroup;

/**
 * Which IPGroups are refused for overlapping an older one ({@link PoolOverlaps}: the oldest serves,
 * ties by name; a refused group blocks nobody). Only groups that could serve take part: with a spec,
 * valid, not being deleted. The planner and the status reconciler both decide here, so a group is
 * refused by one exactly when the other says so.
 */
public final class GroupOverlaps {
  /** The kind named in messages. */
  static final String KIND = "IPGroup";

  private GroupOverlaps() {}

  /** The decision over the given IPGroups (every IPGroup of the cluster, as last seen). */
  public static PoolOverlaps.Decision decide(Collection<IPGroup> groups) {
    List<PoolOverlaps.Owner> owners = new ArrayList<>();
    for (IPGroup g : groups) {
      if (g.getSpec() == null || g.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      String name = g.getMetadata().getName();
      if (!Pool.validate(name, g.getSpec().ranges(), g.getSpec().excluded()).isEmpty()) {
        continue; // an invalid group serves nothing and reports itself
      }
      owners.add(new PoolOverlaps.Owner(KIND, name, created(g),
          g.getSpec().ranges().stream().map(IpRange::parse).toList()));
    }
    return PoolOverlaps.decide(owners);
  }

  /** The creation time (whole seconds in the API); null when unknown, which counts as youngest. */
  private static Instant created(IPGroup g) {
    String t = g.getMetadata().getCreationTimestamp();
    try {
      return t == null ? null : Instant.parse(t);
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
