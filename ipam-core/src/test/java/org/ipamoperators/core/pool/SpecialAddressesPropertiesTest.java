package org.ipamoperators.core.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import inet.ipaddr.IPAddress;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.allocation.Allocator;
import org.ipamoperators.core.allocation.AllocatorOptions;
import org.junit.jupiter.api.Test;

/**
 * The table of addresses never handed out or announced, over generated addresses and pools of both families
 * (QuickTheories). The reference is the IPAddress library's own predicates (loopback, link-local, multicast,
 * unspecified, IPv4-mapped) plus the two IPv4 blocks it has none for; generation leans towards the edges of
 * those blocks, where an off-by-one would be.
 */
class SpecialAddressesPropertiesTest {
  /** Edges of the special blocks and of ordinary space, to generate addresses near. */
  private static final List<Ip> ANCHORS = List.of("0.0.0.0", "1.0.0.0", "127.0.0.0", "128.0.0.0", "169.254.0.0",
      "169.255.0.0", "169.254.169.254", "224.0.0.0", "240.0.0.0", "255.255.255.255", "192.0.2.0", "::", "::2",
      "::ffff:0:0", "::1:0:0:0", "fe80::", "fec0::", "ff00::", "2001:db8::", "2001:db8:0:1::").stream()
      .map(Ip::parse).toList();

  /** The reference: what the library says about the address, and 0.0.0.0/8 and 240.0.0.0/4 by their first octet. */
  static boolean special(Ip ip) {
    IPAddress a = ip.toIPAddress();
    boolean v4Blocks = ip.isIPv4() && ((ip.lo() >>> 24) == 0 || (ip.lo() >>> 24) >= 240);
    boolean mapped = !ip.isIPv4() && a.toIPv6().isIPv4Mapped();
    return a.isUnspecified() || a.isLoopback() || a.isLinkLocal() || a.isMulticast() || v4Blocks || mapped;
  }

  /** The Subnet-Router anycast of a pool range: the first address of an IPv6 CIDR with a host part. */
  static boolean anycastOfItsRange(List<IpRange> ranges, Ip ip) {
    return ranges.stream().anyMatch(r -> r.family() == IpFamily.IPV6 && r.isCidr() && r.prefixLength() < 128
        && r.first().equals(ip));
  }

  private static Ip near(SplittableRandom r, IpFamily family) {
    List<Ip> anchors = ANCHORS.stream().filter(a -> a.family() == family).toList();
    BigInteger base = r.nextInt(4) == 0 ? new BigInteger(family.bits(), new java.util.Random(r.nextLong()))
        : anchors.get(r.nextInt(anchors.size())).toBigInteger();
    BigInteger delta = BigInteger.valueOf(r.nextLong(1L << r.nextInt(1, 24)));
    BigInteger v = r.nextBoolean() ? base.add(delta) : base.subtract(delta);
    BigInteger max = BigInteger.ONE.shiftLeft(family.bits()).subtract(BigInteger.ONE);
    return Ip.fromBigInteger(family, v.max(BigInteger.ZERO).min(max));
  }

  /** A CIDR of a random length around an address, or a start-end range starting near it. */
  private static String range(SplittableRandom r, IpFamily family) {
    Ip at = near(r, family);
    if (r.nextBoolean()) {
      int prefix = family == IpFamily.IPV4 ? r.nextInt(1, 33) : r.nextInt(2, 129);
      IPAddress block = at.toIPAddress().setPrefixLength(prefix, false).toPrefixBlock();
      return block.toCanonicalString();
    }
    Ip end = Ip.fromBigInteger(family, at.toBigInteger().add(BigInteger.valueOf(r.nextInt(1 << r.nextInt(1, 12))))
        .min(BigInteger.ONE.shiftLeft(family.bits()).subtract(BigInteger.ONE)));
    return at.equals(end) ? at.toString() : at + "-" + end;
  }

  @Test
  void membershipAgreesWithTheReference() {
    qt().withExamples(20_000).forAll(longs().all()).checkAssert(seed -> {
      SplittableRandom r = new SplittableRandom(seed);
      Ip ip = near(r, r.nextBoolean() ? IpFamily.IPV4 : IpFamily.IPV6);
      assertThat(SpecialAddresses.find(ip).isPresent()).as("%s", ip).isEqualTo(special(ip));
      assertThat(SpecialAddresses.whyNeverAnnounced(ip).isPresent()).as("%s", ip).isEqualTo(special(ip));
    });
  }

  @Test
  void noAllocatorEverHandsOutOne() {
    java.util.concurrent.atomic.AtomicInteger valid = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger cut = new java.util.concurrent.atomic.AtomicInteger();
    qt().withExamples(600).forAll(longs().all()).checkAssert(seed -> {
      SplittableRandom r = new SplittableRandom(seed);
      IpFamily family = r.nextBoolean() ? IpFamily.IPV4 : IpFamily.IPV6;
      List<String> ranges = new ArrayList<>();
      for (int i = r.nextInt(1, 4); i > 0; i--) {
        ranges.add(range(r, family));
      }
      if (!Pool.validate("p", ranges, List.of()).isEmpty()) {
        return; // overlapping, only special (the next property) or the whole IPv6 space
      }
      Pool pool = Pool.of("p", ranges, List.of());
      valid.incrementAndGet();
      if (!pool.protocolReserved().isEmpty()) {
        cut.incrementAndGet();
      }
      for (IpRange u : pool.usable(family)) {
        for (Ip edge : List.of(u.first(), u.last())) {
          assertThat(special(edge) || anycastOfItsRange(pool.ranges(), edge)).as("%s: usable %s", ranges, edge)
              .isFalse();
        }
        assertThat(SpecialAddresses.blocks()).as("%s: usable %s", ranges, u).noneMatch(b -> b.range().overlaps(u));
      }
      AllocationStrategy strategy = AllocationStrategy.values()[r.nextInt(AllocationStrategy.values().length)];
      Allocator a = Allocator.create(pool, AllocatorOptions.of(strategy).withSeed(seed));
      Optional<Ip> ip;
      for (int n = 0; n < 200 && (ip = a.allocate(family, "o" + n)).isPresent(); n++) {
        assertThat(special(ip.get()) || anycastOfItsRange(pool.ranges(), ip.get())).as("%s %s: handed out %s", ranges,
            strategy, ip.get()).isFalse();
      }
    });
    // Not vacuous: most generated pools are valid, and many have addresses cut.
    System.out.printf("noAllocatorEverHandsOutOne: %d valid pools, %d with cuts%n", valid.get(), cut.get());
    assertThat(valid.get()).isGreaterThan(200);
    assertThat(cut.get()).isGreaterThan(50);
  }

  /** The list of blocks, as CIDRs (224.0.0.0/3 is multicast and 240.0.0.0/4 together). */
  private static final List<IpRange> ONLY_SPECIAL = List.of("0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16",
      "224.0.0.0/3", "::/127", "::ffff:0:0/96", "fe80::/10", "ff00::/8").stream().map(IpRange::parse).toList();

  @Test
  void aRangeOfOnlySpecialAddressesIsRefused() {
    qt().withExamples(2_000).forAll(longs().all()).checkAssert(seed -> {
      SplittableRandom r = new SplittableRandom(seed);
      IpRange in = ONLY_SPECIAL.get(r.nextInt(ONLY_SPECIAL.size()));
      BigInteger offset = new BigInteger(in.size().bitLength(), new java.util.Random(r.nextLong())).mod(in.size());
      Ip at = Ip.fromBigInteger(in.family(), in.first().toBigInteger().add(offset));
      String text;
      if (r.nextBoolean()) {
        int prefix = r.nextInt(in.prefixLength(), in.family().bits() + 1);
        text = at.toIPAddress().setPrefixLength(prefix, false).toPrefixBlock().toCanonicalString();
      } else {
        BigInteger room = in.last().toBigInteger().subtract(at.toBigInteger());
        BigInteger len = BigInteger.valueOf(r.nextLong(1L << r.nextInt(1, 40))).min(room);
        Ip end = Ip.fromBigInteger(in.family(), at.toBigInteger().add(len));
        text = at.equals(end) ? at.toString() : at + "-" + end;
      }
      IpRange range = IpRange.parse(text);
      assertThat(special(range.first()) && special(range.last())).as("the reference agrees on %s", text).isTrue();
      assertThat(Pool.validate("p", List.of(text), List.of())).as(text)
          .anySatisfy(p -> assertThat(p.message()).contains(text).contains("only addresses"));
    });
  }

  /** Interface IDs RFC 4291 2.6.1 and RFC 2526 reserve as anycast in every /64. */
  private static boolean anycastInterfaceId(Ip ip) {
    long id = ip.lo();
    return !ip.isIPv4() && (id == 0 || Long.compareUnsigned(id, 0xfdffffffffffff80L) >= 0
        && Long.compareUnsigned(id, 0xfdffffffffffffffL) <= 0 || Long.compareUnsigned(id, 0xffffffffffffff80L) >= 0);
  }

  /** Usable by the rules written out: in a range, not special, not an anycast of its range or first or last /64. */
  private static boolean usableByReference(List<IpRange> ranges, Ip ip) {
    Optional<IpRange> in = ranges.stream().filter(x -> x.contains(ip)).findFirst();
    if (in.isEmpty() || special(ip) || anycastOfItsRange(ranges, ip)) {
      return false;
    }
    IpRange r = in.get();
    boolean edge64 = ip.hi() == r.first().hi() || ip.hi() == r.last().hi();
    boolean v4NetOrBroadcast = ip.isIPv4() && r.isCidr() && r.prefixLength() <= 30
        && (ip.equals(r.first()) || ip.equals(r.last()));
    return !(edge64 && anycastInterfaceId(ip)) && !v4NetOrBroadcast;
  }

  @Test
  void aPoolWithAnOrdinaryAddressIsValidAndUsabilityAgreesWithTheReference() {
    qt().withExamples(2_000).forAll(longs().all()).checkAssert(seed -> {
      SplittableRandom r = new SplittableRandom(seed);
      IpFamily family = r.nextBoolean() ? IpFamily.IPV4 : IpFamily.IPV6;
      String text = range(r, family);
      IpRange range = IpRange.parse(text);
      List<Ip> probes = new ArrayList<>(List.of(range.first(), range.last()));
      java.util.Random random = new java.util.Random(r.nextLong());
      for (int i = 0; i < 16; i++) {
        BigInteger offset = new BigInteger(range.size().bitLength(), random).mod(range.size());
        probes.add(Ip.fromBigInteger(family, range.first().toBigInteger().add(offset)));
      }
      List<PoolProblem> problems = Pool.validate("p", List.of(text), List.of());
      if (family == IpFamily.IPV6 && range.size().bitLength() > 127) {
        return; // the whole IPv6 space, refused for that
      }
      Pool probe = problems.isEmpty() ? Pool.of("p", List.of(text), List.of()) : null;
      for (Ip ip : probes) {
        if (probe == null) {
          assertThat(usableByReference(List.of(range), ip)).as("%s is refused (%s) but %s is usable", text,
              problems, ip).isFalse();
        } else {
          assertThat(probe.isUsable(ip)).as("%s: %s", text, ip).isEqualTo(usableByReference(List.of(range), ip));
        }
      }
    });
  }
}
