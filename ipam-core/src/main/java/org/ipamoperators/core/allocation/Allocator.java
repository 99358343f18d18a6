package org.ipamoperators.core.allocation;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.pool.Pool;

/**
 * Hands out and takes back the addresses of one {@link Pool}. The free space of each family is a
 * {@link FreeRangeTree}: every operation costs O(log r) for r free ranges, whatever the pool's size,
 * so an IPv6 /48 behaves like an IPv4 /24. Not thread-safe; a controller owns one per pool and
 * rebuilds it from the cluster's claims (see the ledger package) rather than trusting memory.
 */
public final class Allocator {
  private final Pool pool;
  private final AllocatorOptions options;
  private final SplittableRandom random;
  private final Map<IpFamily, FamilySpace> spaces = new EnumMap<>(IpFamily.class);

  /** The free space of one family, as offsets from its lowest usable address. */
  private static final class FamilySpace {
    final IpFamily family;
    final Ip base;
    final long spanHi; // number of offsets from base to the highest usable address, plus one
    final long spanLo;
    final BigInteger capacity;
    final FreeRangeTree tree = new FreeRangeTree();
    // Released addresses waiting out the cooldown, oldest first, with the time they may return.
    final LinkedHashMap<Ip, Long> cooling = new LinkedHashMap<>();

    FamilySpace(IpFamily family, java.util.List<IpRange> usable, BigInteger capacity) {
      this.family = family;
      this.capacity = capacity;
      this.base = usable.isEmpty() ? new Ip(family, 0, 0) : usable.get(0).first();
      Ip top = usable.isEmpty() ? base : usable.get(usable.size() - 1).last();
      long topHi = U128.subHi(top.hi(), top.lo(), base.hi(), base.lo());
      long topLo = top.lo() - base.lo();
      this.spanHi = U128.addHi(topHi, topLo, 0, 1);
      this.spanLo = topLo + 1;
      for (IpRange r : usable) {
        Ip f = r.first();
        Ip l = r.last();
        tree.insert(U128.subHi(f.hi(), f.lo(), base.hi(), base.lo()), f.lo() - base.lo(),
            U128.subHi(l.hi(), l.lo(), base.hi(), base.lo()), l.lo() - base.lo());
      }
    }

    Ip address(long offHi, long offLo) {
      return new Ip(family, U128.addHi(base.hi(), base.lo(), offHi, offLo), base.lo() + offLo);
    }

    long offsetHi(Ip ip) {
      return U128.subHi(ip.hi(), ip.lo(), base.hi(), base.lo());
    }

    long offsetLo(Ip ip) {
      return ip.lo() - base.lo();
    }
  }

  private Allocator(Pool pool, AllocatorOptions options) {
    this.pool = pool;
    this.options = options;
    this.random = new SplittableRandom(options.seed());
    for (IpFamily family : pool.families()) {
      spaces.put(family, new FamilySpace(family, pool.usable(family), pool.capacity(family)));
    }
  }

  /**
   * An allocator over a fresh pool: every usable address free.
   *
   * @param pool the pool to hand out
   * @param options the strategy, cooldown, clock and random seed
   * @return the allocator
   */
  public static Allocator create(Pool pool, AllocatorOptions options) {
    return new Allocator(pool, options);
  }

  /**
   * The pool this allocator hands out.
   *
   * @return the pool
   */
  public Pool pool() {
    return pool;
  }

  /**
   * The options the allocator was created with.
   *
   * @return the options
   */
  public AllocatorOptions options() {
    return options;
  }

  /**
   * Allocates with the configured strategy; STICKY needs {@link #allocate(IpFamily, String)}.
   *
   * @param family the family of the address
   * @return the address, or empty when the family has no free address in this pool
   * @throws IllegalArgumentException when the configured strategy is STICKY
   */
  public Optional<Ip> allocate(IpFamily family) {
    if (options.strategy() == AllocationStrategy.STICKY) {
      throw new IllegalArgumentException("the STICKY strategy needs an owner key");
    }
    return allocate(family, options.strategy(), null);
  }

  /**
   * Allocates with the configured strategy; the owner key drives STICKY and is ignored otherwise.
   *
   * @param family the family of the address
   * @param ownerKey the owner's stable key; required by STICKY
   * @return the address, or empty when the family has no free address in this pool
   */
  public Optional<Ip> allocate(IpFamily family, String ownerKey) {
    return allocate(family, options.strategy(), ownerKey);
  }

  /**
   * Allocates one address, or returns empty when the family has no free address in this pool.
   * When only addresses still cooling down are free, the one released first is reused.
   *
   * @param family the family of the address
   * @param strategy how to pick the address, overriding the configured one
   * @param ownerKey the owner's stable key; required by STICKY, ignored otherwise
   * @return the address, or empty when the family has no free address in this pool
   * @throws IllegalArgumentException when the strategy is STICKY and the owner key is null
   */
  public Optional<Ip> allocate(IpFamily family, AllocationStrategy strategy, String ownerKey) {
    FamilySpace s = spaces.get(family);
    if (s == null) {
      return Optional.empty();
    }
    returnCooledAddresses(s);
    FreeRangeTree t = s.tree;
    if (t.isEmpty()) {
      return takeOldestCooling(s);
    }
    switch (strategy) {
      case FIRST_FREE -> t.takeOne(true, 0, 0);
      case RANDOM -> {
        randomBelow(t.countHi(), t.countLo());
        t.takeOne(true, randomHi, randomLo);
      }
      case STICKY -> {
        if (ownerKey == null) {
          throw new IllegalArgumentException("the STICKY strategy needs an owner key");
        }
        long[] c = stickyCandidate(s, ownerKey);
        long[] f = ceilingFree(t, c[0], c[1]);
        t.takeOne(false, f[0], f[1]);
      }
      default -> throw new IllegalStateException("unknown strategy " + strategy);
    }
    return Optional.of(s.address(t.foundStartHi, t.foundStartLo));
  }

  /**
   * Takes one specific address if it is free.
   *
   * @param ip the address
   * @return CLAIMED when it is now taken, otherwise why not
   */
  public ClaimOutcome claim(Ip ip) {
    FamilySpace s = spaces.get(ip.family());
    if (s == null || !pool.contains(ip)) {
      return ClaimOutcome.OUTSIDE_POOL;
    }
    if (!pool.isUsable(ip)) {
      return ClaimOutcome.RESERVED;
    }
    if (s.cooling.remove(ip) != null) {
      return ClaimOutcome.CLAIMED;
    }
    long hi = s.offsetHi(ip);
    long lo = s.offsetLo(ip);
    return s.tree.takeOne(false, hi, lo) ? ClaimOutcome.CLAIMED : ClaimOutcome.ALREADY_ALLOCATED;
  }

  /**
   * Returns an allocated address to the pool; false when it was not allocated from this pool.
   * With a cooldown, allocate hands it out again only after the cooldown, or when nothing else is
   * free.
   *
   * @param ip the address
   * @return true when the address was allocated and is now released
   */
  public boolean release(Ip ip) {
    FamilySpace s = spaces.get(ip.family());
    if (s == null || !pool.isUsable(ip) || isFree(ip)) {
      return false;
    }
    if (!options.cooldown().isZero()) {
      s.cooling.put(ip, options.clock().millis() + options.cooldown().toMillis());
      return true;
    }
    give(s.tree, s.offsetHi(ip), s.offsetLo(ip));
    return true;
  }

  /**
   * True when the address is usable and not allocated (addresses cooling down count as free).
   *
   * @param ip the address
   * @return whether it is free
   */
  public boolean isFree(Ip ip) {
    FamilySpace s = spaces.get(ip.family());
    if (s == null || !pool.isUsable(ip)) {
      return false;
    }
    if (s.cooling.containsKey(ip)) {
      return true;
    }
    long hi = s.offsetHi(ip);
    long lo = s.offsetLo(ip);
    return s.tree.floor(hi, lo) && U128.compare(s.tree.foundEndHi, s.tree.foundEndLo, hi, lo) >= 0;
  }

  /**
   * Usable addresses of a family (the pool's size less reserved, network and broadcast).
   *
   * @param family the family
   * @return the count; zero when the pool has none of the family
   */
  public BigInteger capacity(IpFamily family) {
    FamilySpace s = spaces.get(family);
    return s == null ? BigInteger.ZERO : s.capacity;
  }

  /**
   * Free addresses of a family, those cooling down included.
   *
   * @param family the family
   * @return the count; zero when the pool has none of the family
   */
  public BigInteger freeCount(IpFamily family) {
    FamilySpace s = spaces.get(family);
    if (s == null) {
      return BigInteger.ZERO;
    }
    return U128.toBigInteger(s.tree.countHi(), s.tree.countLo())
        .add(BigInteger.valueOf(s.cooling.size()));
  }

  /**
   * Allocated addresses of a family: the capacity less the free addresses.
   *
   * @param family the family
   * @return the count
   */
  public BigInteger allocatedCount(IpFamily family) {
    return capacity(family).subtract(freeCount(family));
  }

  /**
   * Number of free ranges in a family: what every operation's cost depends on.
   *
   * @param family the family
   * @return the count, addresses cooling down not included; zero when the pool has none of the
   *     family
   */
  public int freeRangeCount(IpFamily family) {
    FamilySpace s = spaces.get(family);
    return s == null ? 0 : s.tree.rangeCount();
  }

  // ---------------------------------------------------------------- internals

  private void returnCooledAddresses(FamilySpace s) {
    if (s.cooling.isEmpty()) {
      return;
    }
    long now = options.clock().millis();
    Iterator<Map.Entry<Ip, Long>> it = s.cooling.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<Ip, Long> e = it.next();
      if (e.getValue() > now) {
        break; // entries are in release order, so later ones are not due either
      }
      it.remove();
      give(s.tree, s.offsetHi(e.getKey()), s.offsetLo(e.getKey()));
    }
  }

  private static Optional<Ip> takeOldestCooling(FamilySpace s) {
    Iterator<Ip> it = s.cooling.keySet().iterator();
    if (!it.hasNext()) {
      return Optional.empty();
    }
    Ip ip = it.next();
    it.remove();
    return Optional.of(ip);
  }

  /** Adds one allocated offset back, merging with free neighbours. */
  private static void give(FreeRangeTree t, long hi, long lo) {
    boolean hasPred = t.floor(hi, lo);
    long pHi = t.foundStartHi;
    long pLo = t.foundStartLo;
    long peHi = t.foundEndHi;
    long peLo = t.foundEndLo;
    boolean predAdjacent = hasPred && U128.addHi(peHi, peLo, 0, 1) == hi && peLo + 1 == lo;
    long nHi = U128.addHi(hi, lo, 0, 1);
    long nLo = lo + 1;
    boolean wraps = nHi == 0 && nLo == 0;
    boolean succAdjacent = !wraps && t.ceiling(nHi, nLo)
        && t.foundStartHi == nHi && t.foundStartLo == nLo;
    long seHi = t.foundEndHi;
    long seLo = t.foundEndLo;
    if (predAdjacent && succAdjacent) {
      t.delete(nHi, nLo);
      t.replace(pHi, pLo, pHi, pLo, seHi, seLo);
    } else if (predAdjacent) {
      t.replace(pHi, pLo, pHi, pLo, hi, lo);
    } else if (succAdjacent) {
      t.replace(nHi, nLo, hi, lo, seHi, seLo);
    } else {
      t.insert(hi, lo, hi, lo);
    }
  }

  /** The first free offset at or after the candidate, wrapping to the lowest free offset. */
  private static long[] ceilingFree(FreeRangeTree t, long hi, long lo) {
    if (t.floor(hi, lo) && U128.compare(t.foundEndHi, t.foundEndLo, hi, lo) >= 0) {
      return new long[] {hi, lo};
    }
    if (t.ceiling(hi, lo) || t.first()) {
      return new long[] {t.foundStartHi, t.foundStartLo};
    }
    throw new IllegalStateException("no free offset");
  }

  private static long[] stickyCandidate(FamilySpace s, String ownerKey) {
    byte[] h;
    try {
      h = MessageDigest.getInstance("SHA-256").digest(ownerKey.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by the Java platform", e);
    }
    if (s.spanHi == 0) {
      long h64 = 0;
      for (int i = 0; i < 8; i++) {
        h64 = (h64 << 8) | (h[i] & 0xff);
      }
      return new long[] {0, s.spanLo == 0 ? h64 : Long.remainderUnsigned(h64, s.spanLo)};
    }
    BigInteger span = U128.toBigInteger(s.spanHi, s.spanLo);
    byte[] h128 = new byte[16];
    System.arraycopy(h, 0, h128, 0, 16);
    BigInteger c = new BigInteger(1, h128).mod(span);
    return new long[] {U128.hiOf(c), U128.loOf(c)};
  }

  private long randomHi;
  private long randomLo;

  /**
   * A uniform random 128-bit value below a non-zero bound, by rejection on the bound's bit length;
   * left in {@link #randomHi} and {@link #randomLo}.
   */
  private void randomBelow(long boundHi, long boundLo) {
    long mHi = U128.subHi(boundHi, boundLo, 0, 1);
    long mLo = boundLo - 1; // largest acceptable value
    if (mHi == 0) {
      long r = 0;
      if (mLo != 0) {
        int shift = Long.numberOfLeadingZeros(mLo);
        do {
          r = random.nextLong() >>> shift;
        } while (Long.compareUnsigned(r, mLo) > 0);
      }
      randomHi = 0;
      randomLo = r;
      return;
    }
    int shift = Long.numberOfLeadingZeros(mHi);
    long rHi;
    long rLo;
    do {
      rHi = random.nextLong() >>> shift;
      rLo = random.nextLong();
    } while (U128.compare(rHi, rLo, mHi, mLo) > 0);
    randomHi = rHi;
    randomLo = rLo;
  }
}
