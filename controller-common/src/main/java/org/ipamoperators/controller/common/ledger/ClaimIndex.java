package org.ipamoperators.controller.common.ledger;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.ipamoperators.core.address.Ip;

/**
 * This process's view of the IPClaims, by address: what it saw, and nothing it did not. It grows
 * with the informer's add and update events and with this process's own successful writes (the
 * object the API server answered), and shrinks only on a delete it observed (an informer event or
 * its own successful delete) of that very claim (same uid). Nothing expires by age, and no entry
 * of one claim is ever removed because of another claim on the same address. So a claim this
 * process created stays visible to every thread from the moment the create returned, whatever the
 * informer shows yet, which a copy of the informer cache alone cannot promise.
 *
 * <p>Besides claims it holds reservations: an address a thread is about to claim, so that threads
 * planning at the same time pick different addresses without a lock around their plans. A
 * reservation only ever steers planning; the API server's create still decides who holds an
 * address, and a claim seen for the address replaces the reservation.
 *
 * <p>Secondary keys ({@link #keys}) find a small set of addresses without a scan: every claim is
 * found under {@link #ownerKey} of its owner, plus whatever the {@code extraKeys} function gives
 * (controller-vip: the Services listed on a shared claim).
 */
public final class ClaimIndex {
  /** One address: the claim seen (null while only reserved) or the reservation. */
  public record Entry(Ip ip, IPClaim claim, Reservation reservation) {
    public boolean reserved() {
      return claim == null;
    }

    /** The owner recorded on the claim, or the one that reserved the address. */
    public ClaimOwner owner() {
      return claim != null ? claim.getSpec().owner() : reservation.owner();
    }
  }

  /** An address being claimed by {@code owner} from {@code pool}; identity matters (see {@link #unreserve}). */
  public static final class Reservation {
    private final ClaimOwner owner;
    private final String pool;

    public Reservation(ClaimOwner owner, String pool) {
      this.owner = owner;
      this.pool = pool;
    }

    public ClaimOwner owner() {
      return owner;
    }

    public String pool() {
      return pool;
    }
  }

  private final Map<Ip, Entry> byIp = new ConcurrentHashMap<>();
  private final Map<String, Set<Ip>> byKey = new ConcurrentHashMap<>();
  private final Function<IPClaim, Collection<String>> extraKeys;
  /** Bumped once before and once after every address the index stops recording: odd while one is being removed. */
  private final AtomicLong removals = new AtomicLong();

  public ClaimIndex() {
    this(c -> List.of());
  }

  public ClaimIndex(Function<IPClaim, Collection<String>> extraKeys) {
    this.extraKeys = extraKeys;
  }

  /** "controller/kind/namespace/name": the key under which every claim of an owner is found. */
  public static String ownerKey(ClaimOwner o) {
    return o.controller() + "/" + o.kind() + "/" + (o.namespace() == null ? "" : o.namespace()) + "/" + o.name();
  }

  /** The claim's address, or null when it has none that parses (such claims are not indexed). */
  public static Ip address(IPClaim c) {
    if (c == null || c.getSpec() == null || c.getSpec().address() == null || c.getSpec().owner() == null) {
      return null;
    }
    try {
      return Ip.parse(c.getSpec().address());
    } catch (RuntimeException e) {
      return null;
    }
  }

  /**
   * A claim as the API server showed it (an informer add or update, or the answer to one of our
   * writes). Replaces a reservation, another claim on the address (one must have been deleted for
   * this one to exist) unless that one is newer, and an older version of the same claim.
   */
  public void seen(IPClaim c) {
    Ip ip = address(c);
    if (ip == null) {
      return;
    }
    byIp.compute(ip, (k, old) -> {
      if (old != null && old.claim() != null && newer(old.claim(), c)) {
        return old;
      }
      // The new keys first, then the old ones it no longer has: a reader of a key the claim keeps never
      // finds the address missing (it would take the owner to hold nothing and claim another address).
      Set<String> keys = keysOf(c);
      keys.forEach(key -> add(key, ip));
      if (old != null && old.claim() != null) {
        keysOf(old.claim()).stream().filter(key -> !keys.contains(key)).forEach(key -> drop(key, ip));
      }
      return new Entry(ip, c, null);
    });
  }

  /**
   * This process's own successful create or update, or a read (the object the API server answered). When the
   * informer's copy of that very version is recorded already, it stays: the answer would be a second copy of
   * the same claim, held for as long as the claim lives.
   */
  public void created(IPClaim c) {
    Ip ip = address(c);
    Entry have = ip == null ? null : byIp.get(ip);
    if (have != null && have.claim() != null && sameVersion(have.claim(), c)) {
      return;
    }
    seen(c);
  }

  private static boolean sameVersion(IPClaim a, IPClaim b) {
    String uid = a.getMetadata() == null ? null : a.getMetadata().getUid();
    String version = a.getMetadata() == null ? null : a.getMetadata().getResourceVersion();
    return uid != null && version != null && b.getMetadata() != null && uid.equals(b.getMetadata().getUid())
        && version.equals(b.getMetadata().getResourceVersion());
  }

  /** A delete observed (informer event, or our own successful delete): forgets that claim, and only it. */
  public void deleted(IPClaim c) {
    Ip ip = address(c);
    if (ip == null) {
      return;
    }
    boolean[] removed = {false};
    byIp.computeIfPresent(ip, (k, old) -> {
      if (old.claim() == null || !sameUid(old.claim(), c)) {
        return old;
      }
      unkey(ip, old.claim());
      removals.incrementAndGet();
      removed[0] = true;
      return null;
    });
    if (removed[0]) {
      removals.incrementAndGet();
    }
  }

  /** Reserves a free address; false when anything (claim or reservation) is recorded for it. */
  public boolean reserve(Ip ip, Reservation r) {
    return byIp.putIfAbsent(ip, new Entry(ip, null, r)) == null;
  }

  /** Drops a reservation that did not become a claim, if it is still that reservation. */
  public void unreserve(Ip ip, Reservation r) {
    boolean[] removed = {false};
    byIp.computeIfPresent(ip, (k, old) -> {
      if (old.reservation() != r) {
        return old;
      }
      removals.incrementAndGet();
      removed[0] = true;
      return null;
    });
    if (removed[0]) {
      removals.incrementAndGet();
    }
  }

  /**
   * A counter of the addresses the index stopped recording (deletes, dropped reservations): it
   * changes with every one and is odd while one is under way. An address seen as recorded stays
   * recorded for as long as this reads the same even number, so a caller may remember "everything
   * below X was taken" under the value it read before looking, and trust it while it is unchanged.
   */
  public long removals() {
    return removals.get();
  }

  public Optional<Entry> get(Ip ip) {
    return Optional.ofNullable(byIp.get(ip));
  }

  public boolean contains(Ip ip) {
    return byIp.containsKey(ip);
  }

  /** The addresses whose claims are found under a key (a snapshot). */
  public Set<Ip> keys(String key) {
    Set<Ip> s = byKey.get(key);
    return s == null ? Set.of() : Set.copyOf(s);
  }

  /** Addresses recorded, claims and reservations. */
  public int size() {
    return byIp.size();
  }

  /** Whether the claim with this uid is recorded. */
  public boolean containsUid(Ip ip, String uid) {
    Entry e = byIp.get(ip);
    return e != null && e.claim() != null && uid != null && uid.equals(e.claim().getMetadata().getUid());
  }

  /** Claims recorded (not reservations), a snapshot. */
  public List<IPClaim> claims() {
    return byIp.values().stream().filter(e -> e.claim() != null).map(Entry::claim).toList();
  }

  private Set<String> keysOf(IPClaim c) {
    Set<String> keys = new java.util.HashSet<>(extraKeys.apply(c));
    keys.add(ownerKey(c.getSpec().owner()));
    return keys;
  }

  /** Adds inside the map's compute, so a concurrent {@link #drop} of the set's last address cannot orphan it. */
  private void add(String key, Ip ip) {
    byKey.compute(key, (k, set) -> {
      Set<Ip> s = set == null ? ConcurrentHashMap.newKeySet() : set;
      s.add(ip);
      return s;
    });
  }

  private void unkey(Ip ip, IPClaim c) {
    drop(ownerKey(c.getSpec().owner()), ip);
    for (String k : extraKeys.apply(c)) {
      drop(k, ip);
    }
  }

  private void drop(String key, Ip ip) {
    byKey.computeIfPresent(key, (k, s) -> {
      s.remove(ip);
      return s.isEmpty() ? null : s;
    });
  }

  private static boolean sameUid(IPClaim a, IPClaim b) {
    String x = a.getMetadata().getUid();
    String y = b.getMetadata().getUid();
    return x != null && x.equals(y);
  }

  /**
   * Whether {@code have} is a later state than {@code incoming}: a higher resourceVersion (both
   * numeric, as etcd's revisions are; when they are not, the incoming object wins). This keeps a
   * late informer event of an old claim from replacing the claim this process just created.
   */
  private static boolean newer(IPClaim have, IPClaim incoming) {
    long a = version(have);
    long b = version(incoming);
    return a >= 0 && b >= 0 && a > b;
  }

  private static long version(IPClaim c) {
    String v = c.getMetadata() == null ? null : c.getMetadata().getResourceVersion();
    if (v == null || v.isEmpty() || v.length() > 18 || !v.chars().allMatch(Character::isDigit)) {
      return -1;
    }
    return Long.parseLong(v);
  }
}
