package org.ipamoperators.egressip.plan;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;

/**
 * Orphans: addresses an earlier version left on a node's cloud interface, marked as ours (ENI
 * tags, NIC ip configuration names) but with no claim in the ledger. Without this they would count
 * as another tool's forever: never taken off, and blocking the address. An address is an orphan
 * when it is on an interface the cloud described in this pass and marked ours there, inside one of
 * this IPAM's CIDRs, claimed by nobody (any pool), and neither planned for nor named by any
 * namespace of this pass. It is taken off only once it was seen so for the whole grace: at least
 * {@link Grace#passes} passes in a row and {@link Grace#minimum} of time. The sightings live in
 * memory only: after a restart they start over, which only delays a take-off.
 */
public final class Orphans {
  private Orphans() {}

  /**
   * How long an orphan must be seen before it is taken off.
   *
   * @param minimum the time from the first sighting
   * @param passes the passes in a row that saw it (at least two: one pass is a snapshot)
   */
  public record Grace(Duration minimum, int passes) {
    public static final Grace DEFAULT = new Grace(Duration.ofSeconds(30), 2);

    public Grace {
      if (minimum == null || minimum.isNegative()) {
        minimum = DEFAULT.minimum();
      }
      passes = Math.max(2, passes);
    }
  }

  /** An address first seen orphaned on a node at {@code since}, in {@code passes} passes in a row. */
  public record Sighting(String node, Instant since, int passes) {}

  /** An orphan due to be taken off its node. */
  public record Orphan(Ip address, String node, Instant since, int passes) {
    public String reason(Instant now) {
      return "marked as this operator's on the interface but claimed by nobody in the ledger and used by no namespace,"
          + " seen so in " + passes + " passes over " + Duration.between(since, now).toSeconds() + " s";
    }
  }

  /** What the previous passes saw (memory only), and the grace to apply. */
  public record Watch(Grace grace, Map<Ip, Sighting> seen) {
    public static final Watch NONE = start(Grace.DEFAULT);

    public Watch {
      seen = Map.copyOf(seen);
    }

    public static Watch start(Grace grace) {
      return new Watch(grace, Map.of());
    }
  }

  /**
   * One pass's outcome: the sightings to keep, the orphans due now, and when a pass is needed for
   * a sighting to come due (null: none pending).
   */
  public record Result(Watch next, List<Orphan> due, Duration review) {
    static Result none(Watch before) {
      return new Result(Watch.start(before.grace()), List.of(), null);
    }
  }

  /** The candidates of one pass: each node the cloud described, with the addresses marked ours on it. */
  public record Described(String node, Set<Ip> marked) {}

  /**
   * The orphans of this pass.
   *
   * @param before the sightings of the previous passes
   * @param described each node the cloud described in this pass and the addresses marked ours on it
   * @param ranges this IPAM's CIDRs
   * @param claimed every address of the ledger, whoever holds it
   * @param used every address planned for, or named by, a namespace in this pass
   * @param now the pass's time
   */
  public static Result watch(Watch before, Collection<Described> described, List<IpRange> ranges, Set<Ip> claimed,
      Set<Ip> used, Instant now) {
    Map<Ip, Sighting> next = new TreeMap<>();
    List<Orphan> due = new ArrayList<>();
    Duration review = null;
    Set<Ip> twice = new HashSet<>();
    for (Described d : described) {
      for (Ip ip : d.marked()) {
        if (claimed.contains(ip) || used.contains(ip) || ranges.stream().noneMatch(r -> r.contains(ip))) {
          continue;
        }
        if (next.containsKey(ip)) {
          twice.add(ip); // marked on two interfaces: not a simple leak, left for a person to look at
          continue;
        }
        Sighting s = before.seen().get(ip);
        s = s != null && s.node().equals(d.node()) ? new Sighting(d.node(), s.since(), s.passes() + 1)
            : new Sighting(d.node(), now, 1);
        next.put(ip, s);
      }
    }
    twice.forEach(next::remove);
    Grace grace = before.grace();
    for (var e : next.entrySet()) {
      Sighting s = e.getValue();
      Duration left = grace.minimum().minus(Duration.between(s.since(), now));
      if (s.passes() >= grace.passes() && (left.isNegative() || left.isZero())) {
        due.add(new Orphan(e.getKey(), s.node(), s.since(), s.passes()));
      } else {
        // the next pass that can bring it closer: when the time is up, or soon when only passes lack
        Duration wait = left.compareTo(Duration.ofSeconds(1)) > 0 ? left : Duration.ofSeconds(1);
        review = review == null || wait.compareTo(review) < 0 ? wait : review;
      }
    }
    return new Result(new Watch(grace, next), List.copyOf(due), review);
  }
}
