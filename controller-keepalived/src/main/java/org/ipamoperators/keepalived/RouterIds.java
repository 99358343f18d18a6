package org.ipamoperators.keepalived;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.controller.common.ids.ClusterIdLedger;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.controller.common.ids.IdClaimResult;
import org.ipamoperators.controller.common.ids.IdSpace;
import org.ipamoperators.controller.common.ledger.ClaimOwner;

/**
 * A group's VRRP router ids, kept in the shared ledger (one IDClaim per id of the group's router-id space, purpose
 * = instance key). The ledger is the truth: after a restart the ids are read back from it, never chosen anew; an id
 * is kept for as long as its instance exists and is not blacklisted. New keys get the id keepalived-operator's
 * status recorded for them when it is free (so a migrated group keeps its ids), else the lowest free one.
 *
 * <p>An id whose instance is gone is retired, not released, for a grace period (reference scenario 7): until every
 * node has loaded a configuration without it, some may still run the old instance with it, and a new instance with
 * that id elsewhere would mix with it. If the instance comes back within the grace, it gets its id back.
 */
final class RouterIds {
  static final String CONTROLLER = "keepalived";
  static final String VRRP_SPACE_PREFIX = "vrrp-";

  /** The outcome: the ids by key, keys without one (none free), and moves to report. */
  record Result(SortedMap<String, Integer> ids, SortedSet<String> exhausted, List<String> moved, boolean retiring,
      boolean quotaReached) {}

  private final ClusterIdLedger ledger;
  private final java.time.Duration grace;
  private final java.time.Clock clock;

  RouterIds(ClusterIdLedger ledger, java.time.Duration grace, java.time.Clock clock) {
    this.ledger = ledger;
    this.grace = grace;
    this.clock = clock;
  }

  static ClaimOwner owner(String namespace, String name, String uid) {
    return new ClaimOwner(CONTROLLER, "KeepalivedGroup", namespace, name, uid);
  }

  static IdSpace space(String routerIdSpace) {
    return IdSpace.vrrpRouterIds(routerIdSpace);
  }

  Result sync(ClaimOwner owner, IdSpace space, SortedSet<String> wanted, Set<Integer> blacklist,
      Map<String, Integer> recorded) {
    return sync(owner, space, wanted, blacklist, recorded, 0);
  }

  /**
   * @param namespaceQuota how many ids of the space the groups of the owner's namespace may hold together (held,
   *     retiring and new ones); 0 for no limit
   */
  Result sync(ClaimOwner owner, IdSpace space, SortedSet<String> wanted, Set<Integer> blacklist,
      Map<String, Integer> recorded, int namespaceQuota) {
    // Claims left in another router-id space (the group's routerIDSpace changed) are released.
    for (IDClaim c : ledger.claimsOf(owner)) {
      if (!space.name().equals(c.getSpec().space()) && c.getSpec().space().startsWith(VRRP_SPACE_PREFIX)) {
        ledger.release(c.getMetadata().getName(), owner);
      }
    }
    List<IDClaim> all = ledger.claimsOf(space);
    Held held = keepHeld(owner, space, wanted, blacklist, all);
    return claimNew(owner, space, wanted, blacklist, recorded, namespaceQuota, all, held);
  }

  /** What the owner holds after its claims of the space are kept, retired or released, and what others hold. */
  private static final class Held {
    final SortedMap<String, Integer> ids = new TreeMap<>();
    final List<String> moved = new ArrayList<>();
    final Set<Integer> taken = new HashSet<>();
    boolean retiring;
    int heldByNamespace; // by the other groups of the owner's namespace
  }

  /**
   * Keeps the owner's claims of keys still wanted, takes back retired ones of keys wanted again, retires those of
   * keys gone (or releases them without grace, or once the grace has passed) and releases blacklisted ones.
   */
  private Held keepHeld(ClaimOwner owner, IdSpace space, SortedSet<String> wanted, Set<Integer> blacklist,
      List<IDClaim> all) {
    Held h = new Held();
    for (IDClaim c : all) {
      int id = c.getSpec().id();
      if (!owner.sameAs(c.getSpec().owner())) {
        h.taken.add(id);
        if (c.getSpec().owner() != null && Objects.equals(owner.namespace(), c.getSpec().owner().namespace())) {
          h.heldByNamespace++;
        }
        continue;
      }
      String key = c.getSpec().purpose();
      java.util.Optional<java.time.Instant> retired = ClusterIdLedger.retiredAt(c);
      if (retired.isPresent()) {
        if (wanted.contains(key) && !h.ids.containsKey(key) && !blacklist.contains(id)
            && ledger.retire(space, id, owner, null)) {
          h.ids.put(key, id); // back within the grace: same id
          h.taken.add(id);
        } else if (!retired.get().plus(grace).isAfter(clock.instant())) {
          ledger.release(space, id, owner);
        } else {
          h.taken.add(id);
          h.retiring = true;
        }
        continue;
      }
      if (!wanted.contains(key) && !grace.isZero()) {
        ledger.retire(space, id, owner, clock.instant());
        h.taken.add(id);
        h.retiring = true;
      } else if (!wanted.contains(key) || h.ids.containsKey(key)) {
        // Gone, or a second id for one key (two replicas raced for it): only one is kept.
        ledger.release(space, id, owner);
      } else if (blacklist.contains(id)) {
        ledger.release(space, id, owner);
        h.moved.add(key);
      } else {
        h.ids.put(key, id);
        h.taken.add(id);
      }
    }
    return h;
  }

  /**
   * Claims an id for every wanted key without one: the id the status recorded for it when free, else the lowest
   * free one, within the namespace's quota.
   */
  private Result claimNew(ClaimOwner owner, IdSpace space, SortedSet<String> wanted, Set<Integer> blacklist,
      Map<String, Integer> recorded, int namespaceQuota, List<IDClaim> all, Held held) {
    SortedMap<String, Integer> ids = held.ids;
    SortedSet<String> exhausted = new TreeSet<>();
    Set<Integer> skip = new HashSet<>(blacklist);
    skip.addAll(held.taken);
    // Ours counts too: held, retiring (in taken, not in ids) and every new one.
    long ownHeld = all.stream().filter(c -> owner.sameAs(c.getSpec().owner())
        && (ids.containsValue(c.getSpec().id()) || held.taken.contains(c.getSpec().id()))).count();
    boolean quotaReached = false;
    for (String key : wanted) {
      if (ids.containsKey(key)) {
        continue;
      }
      if (namespaceQuota > 0 && held.heldByNamespace + ownHeld >= namespaceQuota) {
        exhausted.add(key);
        quotaReached = true;
        continue;
      }
      Integer before = recorded.get(key);
      if (before != null && space.contains(before) && !skip.contains(before)
          && ledger.claim(space, before, key, owner).ours()) {
        ids.put(key, before);
        skip.add(before);
        ownHeld++;
        continue;
      }
      if (skip.size() >= space.size()) {
        exhausted.add(key); // every id taken, as read above: no create attempts
        continue;
      }
      // The space was read above (skip holds what is taken): one create per key, more only if someone raced us.
      IdClaimResult r = claimLowest(space, key, owner, skip);
      if (r.ours()) {
        ids.put(key, r.id().getAsInt());
        ownHeld++;
      } else {
        exhausted.add(key);
        for (int id = space.min(); id <= space.max(); id++) {
          skip.add(id); // all tried: the keys after this one need not try again
        }
      }
    }
    return new Result(ids, exhausted, held.moved, held.retiring, quotaReached);
  }

  /**
   * Claims the lowest id of the space not in {@code skip} for {@code key}. Every id tried joins {@code skip}, taken
   * by someone else or now ours, so the keys after this one never try it again: when the read of the space is stale
   * (another group claimed a run of ids since), the cost is one failed create per id taken since the read, not one
   * per id and key (two groups claiming 30 ids each at once would otherwise send about 1,800 creates).
   */
  private IdClaimResult claimLowest(IdSpace space, String key, ClaimOwner owner, Set<Integer> skip) {
    for (int id = space.min(); id <= space.max(); id++) {
      if (skip.contains(id)) {
        continue;
      }
      IdClaimResult r = ledger.claim(space, id, key, owner);
      skip.add(id);
      if (r.ours()) {
        return r;
      }
    }
    return new IdClaimResult(IdClaimResult.Outcome.EXHAUSTED, java.util.OptionalInt.empty(), owner);
  }

  /**
   * The owner is being deleted: every claim it holds, router ids in any space and its metrics port, is retired, not
   * released, since its pods run VRRP with those ids until the garbage collector has removed them. A claim retired
   * already keeps its time. {@link OrphanRouterIdReconciler} releases them once the grace has passed, also after a
   * restart (the time is on the claim); with no grace they are released at once.
   *
   * @return false if a claim changed meanwhile and was not retired (to be tried again)
   */
  boolean retireAll(ClaimOwner owner) {
    if (grace.isZero()) {
      releaseAll(owner);
      return true;
    }
    java.time.Instant now = clock.instant();
    boolean all = true;
    for (IDClaim c : ledger.claimsOf(owner)) {
      if (ClusterIdLedger.retiredAt(c).isEmpty()) {
        int id = c.getSpec().id();
        all &= ledger.retire(new IdSpace(c.getSpec().space(), id, id), id, owner, now);
      }
    }
    return all;
  }

  /** Releases every id the owner holds, in any space. */
  void releaseAll(ClaimOwner owner) {
    for (IDClaim c : ledger.claimsOf(owner)) {
      ledger.release(c.getMetadata().getName(), owner);
    }
  }
}
