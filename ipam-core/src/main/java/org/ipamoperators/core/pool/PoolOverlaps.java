package org.ipamoperators.core.pool;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.ipamoperators.core.address.IpRange;

/**
 * Which of several pool owners (EgressIPAMs, IPGroups...) may serve when their ranges overlap. Two
 * owners handing out the same addresses fight over them forever, so an overlapping owner is refused
 * and the one that was there first keeps serving; both serving is never the outcome.
 *
 * <p>The rule: owners are taken in {@linkplain #AGE age order} (earliest creation time first, ties
 * by name, then kind). Each is judged only against the owners accepted before it: it is refused
 * when one of its ranges shares an address with a range of an accepted owner, and accepted
 * otherwise. A refused owner does not block younger ones, so when the oldest of a chain is deleted
 * the next one serves, and the outcome never depends on owners that serve nothing. Ranges are
 * compared as written (reserved addresses inside them do not make an overlap go away); an owner's
 * ranges overlapping each other is the owner's own problem ({@link Pool#validate}) and ignored here.
 *
 * <p>The decision depends only on the set of owners, not on the order they are given in. It
 * compares every range with every accepted range: meant for the tens or hundreds of pools of a
 * cluster.
 */
public final class PoolOverlaps {
  private PoolOverlaps() {}

  /** At most this many overlaps are spelled out in a {@link Refusal#message()}; the rest are counted. */
  public static final int SHOWN = 5;

  /**
   * One owner of ranges.
   *
   * @param kind what the owner is, for messages ({@code EgressIPAM}, {@code IPGroup})
   * @param name its name; with {@code kind}, unique among the owners decided together
   * @param created when it was created; null when unknown, which counts as after every known time
   * @param ranges its ranges, of either family
   */
  public record Owner(String kind, String name, Instant created, List<IpRange> ranges) {
    /**
     * Checks the owner and copies its ranges.
     *
     * @param kind what the owner is
     * @param name its name
     * @param created when it was created, or null
     * @param ranges its ranges
     * @throws NullPointerException when kind, name or ranges is null
     */
    public Owner {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(name, "name");
      ranges = List.copyOf(ranges);
    }

    /**
     * The owner as messages name it.
     *
     * @return for example {@code EgressIPAM 'a'}
     */
    public String describe() {
      return kind + " '" + name + "'";
    }
  }

  /**
   * One range of a refused owner sharing addresses with one range of an older, accepted owner.
   *
   * @param range the refused owner's range
   * @param other the accepted owner
   * @param otherRange the accepted owner's range
   */
  public record Overlap(IpRange range, Owner other, IpRange otherRange) {
    /**
     * The overlap in words.
     *
     * @return for example {@code 10.0.0.0/28 overlaps EgressIPAM 'a' (10.0.0.0/27)}
     */
    public String message() {
      return range.text() + " overlaps " + other.describe() + " (" + otherRange.text() + ")";
    }
  }

  /**
   * An owner that may not serve, and why.
   *
   * @param owner the refused owner
   * @param overlaps every overlap with an accepted owner: by the refused owner's range, then by the
   *     accepted owner's age, then by its range; never empty
   */
  public record Refusal(Owner owner, List<Overlap> overlaps) {
    /**
     * Copies the overlaps.
     *
     * @param owner the refused owner
     * @param overlaps the overlaps
     */
    public Refusal {
      overlaps = List.copyOf(overlaps);
    }

    /**
     * The accepted owners it overlaps, oldest first.
     *
     * @return each once
     */
    public List<Owner> olderOwners() {
      return overlaps.stream().map(Overlap::other).distinct().sorted(AGE).toList();
    }

    /**
     * The reason for a condition or an Event: the first {@value PoolOverlaps#SHOWN} overlaps, then
     * how many more.
     *
     * @return for example {@code 10.0.0.0/28 overlaps EgressIPAM 'a' (10.0.0.0/27)}
     */
    public String message() {
      String shown = String.join("; ", overlaps.stream().limit(SHOWN).map(Overlap::message).toList());
      return overlaps.size() <= SHOWN ? shown : shown + "; and " + (overlaps.size() - SHOWN) + " more overlap(s)";
    }
  }

  /**
   * The outcome for every owner.
   *
   * @param accepted the owners that serve, in age order; no two of them overlap
   * @param refused the owners that may not serve, in age order
   */
  public record Decision(List<Owner> accepted, List<Refusal> refused) {
    /**
     * Copies the lists.
     *
     * @param accepted the owners that serve
     * @param refused the refusals
     */
    public Decision {
      accepted = List.copyOf(accepted);
      refused = List.copyOf(refused);
    }

    /**
     * Why an owner is refused.
     *
     * @param kind the owner's kind
     * @param name the owner's name
     * @return the refusal, or empty when the owner is accepted or was not decided
     */
    public Optional<Refusal> refusal(String kind, String name) {
      return refused.stream().filter(r -> r.owner().kind().equals(kind) && r.owner().name().equals(name)).findFirst();
    }
  }

  /** First come, first served: earliest creation (unknown last), then name, then kind. */
  public static final Comparator<Owner> AGE = Comparator
      .comparing(Owner::created, Comparator.nullsLast(Comparator.<Instant>naturalOrder()))
      .thenComparing(Owner::name).thenComparing(Owner::kind);

  /**
   * Decides which owners serve.
   *
   * @param owners the owners, in any order
   * @return the accepted owners and the refusals, each in age order
   * @throws IllegalArgumentException when two owners have the same kind and name
   */
  public static Decision decide(Collection<Owner> owners) {
    Set<List<String>> seen = new HashSet<>();
    for (Owner o : owners) {
      if (!seen.add(List.of(o.kind(), o.name()))) {
        throw new IllegalArgumentException("two owners named " + o.describe());
      }
    }
    List<Owner> accepted = new ArrayList<>();
    List<List<IpRange>> acceptedRanges = new ArrayList<>(); // each accepted owner's, sorted once
    List<Refusal> refused = new ArrayList<>();
    for (Owner o : owners.stream().sorted(AGE).toList()) {
      List<IpRange> mine = o.ranges().stream().sorted().distinct().toList();
      List<Overlap> overlaps = new ArrayList<>();
      for (IpRange r : mine) {
        for (int i = 0; i < accepted.size(); i++) {
          for (IpRange theirs : acceptedRanges.get(i)) {
            if (r.overlaps(theirs)) {
              overlaps.add(new Overlap(r, accepted.get(i), theirs));
            }
          }
        }
      }
      if (overlaps.isEmpty()) {
        accepted.add(o);
        acceptedRanges.add(mine);
      } else {
        refused.add(new Refusal(o, overlaps));
      }
    }
    return new Decision(accepted, refused);
  }
}
