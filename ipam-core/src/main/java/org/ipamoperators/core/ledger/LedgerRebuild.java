package org.ipamoperators.core.ledger;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.allocation.Allocator;
import org.ipamoperators.core.allocation.AllocatorOptions;
import org.ipamoperators.core.allocation.ClaimOutcome;
import org.ipamoperators.core.pool.Pool;

/**
 * Rebuilds allocator state from the claims found in a cluster, so a restarted operator changes
 * nothing that was already assigned. Conflicts are reported as data, never thrown: the same address
 * claimed twice keeps a deterministic winner (earliest claim, then smallest owner name, whatever
 * the input order), and the loser is reported so that it can be given a new address.
 */
public final class LedgerRebuild {
  private static final Comparator<Claim> PRIORITY = Comparator
      .comparing(Claim::address)
      .thenComparing(Claim::claimedAt, Comparator.nullsLast(Comparator.<Instant>naturalOrder()))
      .thenComparing(Claim::owner);

  private LedgerRebuild() {}

  /**
   * Rebuilds a pool's ledger from the claims found.
   *
   * @param pool the pool
   * @param options the allocator's options
   * @param claims the claims found, any order
   * @return the allocator with every honoured claim taken, the owners and the conflicts
   */
  public static RebuiltLedger rebuild(Pool pool, AllocatorOptions options, Collection<Claim> claims) {
    Allocator allocator = Allocator.create(pool, options);
    TreeMap<Ip, String> owners = new TreeMap<>();
    List<LedgerConflict> conflicts = new ArrayList<>();
    List<Claim> ordered = new ArrayList<>(claims);
    ordered.sort(PRIORITY);
    for (Claim c : ordered) {
      String holder = owners.get(c.address());
      if (holder != null) {
        if (!holder.equals(c.owner())) {
          conflicts.add(new LedgerConflict(ConflictKind.DUPLICATE_CLAIM, c.address(), c.owner(),
              holder, c.address() + " is claimed by both " + holder + " and " + c.owner() + "; "
              + holder + " keeps it (earlier claim), " + c.owner() + " needs another address"));
        }
        continue;
      }
      ClaimOutcome outcome = allocator.claim(c.address());
      switch (outcome) {
        case CLAIMED -> owners.put(c.address(), c.owner());
        case OUTSIDE_POOL -> conflicts.add(new LedgerConflict(ConflictKind.OUTSIDE_POOL,
            c.address(), c.owner(), null, c.owner() + " holds " + c.address()
            + ", which is outside pool '" + pool.name() + "'"));
        case RESERVED -> conflicts.add(new LedgerConflict(ConflictKind.RESERVED_ADDRESS,
            c.address(), c.owner(), null, c.owner() + " holds " + c.address() + ", but "
            + why(pool, c.address())));
        case ALREADY_ALLOCATED -> throw new IllegalStateException(
            "fresh allocator reported " + c.address() + " taken"); // owners map prevents this
        default -> throw new IllegalStateException("unknown outcome " + outcome);
      }
    }
    return new RebuiltLedger(allocator, owners, conflicts);
  }

  private static String why(Pool pool, Ip ip) {
    Optional<String> why = pool.whyUnusable(ip);
    return why.orElse(ip + " is not usable");
  }
}
