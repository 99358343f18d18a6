package org.ipamoperators.core.pool;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.ipamoperators.core.address.InvalidAddressException;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.address.IpRange;

/**
 * A validated set of address ranges, IPv4 and IPv6 alike, with reserved addresses taken out. IPv4
 * network and broadcast addresses of CIDRs are never usable, except in /31 and /32 (RFC 3021); nor
 * are the addresses of {@link ProtocolReserved}: those of {@link SpecialAddresses} and IPv6 anycast
 * addresses. A range holding nothing else is refused. The usable space is kept as a few sorted
 * ranges per family; nothing here enumerates addresses.
 */
public final class Pool {
  private final String name;
  private final List<IpRange> ranges;
  private final List<IpRange> reserved;
  private final Map<IpFamily, List<IpRange>> usable;
  private final List<ProtocolReserved> protocolReserved;

  private Pool(String name, List<IpRange> ranges, List<IpRange> reserved) {
    this.name = name;
    this.ranges = List.copyOf(ranges);
    this.reserved = List.copyOf(reserved);
    this.protocolReserved = ranges.stream().flatMap(r -> ProtocolReserved.of(r).stream()).toList();
    this.usable = new EnumMap<>(IpFamily.class);
    for (IpFamily family : IpFamily.values()) {
      List<IpRange> u = usableRanges(family);
      if (!u.isEmpty() || ranges.stream().anyMatch(r -> r.family() == family)) {
        usable.put(family, u);
      }
    }
  }

  /**
   * Parses and validates; throws with every problem found.
   *
   * @param name the pool's name, for messages
   * @param ranges the address ranges: addresses, CIDRs or start-end ranges
   * @param reserved addresses and ranges of the pool never handed out; may be null
   * @return the pool
   * @throws InvalidPoolException when the definition has problems
   */
  public static Pool of(String name, Collection<String> ranges, Collection<String> reserved) {
    List<PoolProblem> problems = new ArrayList<>();
    Pool pool = build(name, ranges, reserved, problems);
    if (!problems.isEmpty()) {
      throw new InvalidPoolException(name, problems);
    }
    return pool;
  }

  /**
   * The problems of a definition; empty when {@link #of} would succeed.
   *
   * @param name the pool's name, for messages
   * @param ranges the address ranges: addresses, CIDRs or start-end ranges
   * @param reserved addresses and ranges of the pool never handed out; may be null
   * @return every problem found, in the order found
   */
  public static List<PoolProblem> validate(String name, Collection<String> ranges,
      Collection<String> reserved) {
    List<PoolProblem> problems = new ArrayList<>();
    build(name, ranges, reserved, problems);
    return problems;
  }

  private static Pool build(String name, Collection<String> rangeTexts,
      Collection<String> reservedTexts, List<PoolProblem> problems) {
    List<IpRange> ranges = parseAll(rangeTexts, problems);
    List<IpRange> reserved = parseAll(reservedTexts == null ? List.of() : reservedTexts, problems);
    if (ranges.isEmpty() && problems.isEmpty()) {
      problems.add(new PoolProblem("", "pool '" + name + "' has no ranges: give at least one CIDR "
          + "or start-end range"));
    }
    List<IpRange> sorted = new ArrayList<>(ranges);
    sorted.sort(null);
    for (int i = 1; i < sorted.size(); i++) {
      IpRange a = sorted.get(i - 1);
      IpRange b = sorted.get(i);
      if (a.overlaps(b)) {
        problems.add(new PoolProblem(b.text(), "ranges " + a.text() + " and " + b.text()
            + " overlap; list each address once"));
      }
    }
    for (IpRange r : ranges) {
      List<ProtocolReserved> cuts = ProtocolReserved.of(r);
      if (ProtocolReserved.coverAll(r, cuts)) {
        problems.add(new PoolProblem(r.text(), "range " + r.text() + " holds only addresses that are never handed "
            + "out: " + String.join("; ", cuts.stream().map(ProtocolReserved::reason).distinct().limit(3).toList())));
      }
      if (r.family() == IpFamily.IPV6 && r.size().bitLength() > 127) {
        problems.add(new PoolProblem(r.text(), "range " + r.text() + " is the whole IPv6 space; "
            + "use a smaller prefix"));
      }
    }
    for (IpRange r : reserved) {
      if (!coveredBy(r, sorted)) {
        problems.add(new PoolProblem(r.text(), "reserved " + r.text() + " is "
            + (sorted.stream().anyMatch(r::overlaps) ? "partly " : "") + "outside the pool ("
            + String.join(", ", sorted.stream().map(IpRange::text).toList()) + ")"));
      }
    }
    return problems.isEmpty() ? new Pool(name, ranges, reserved) : null;
  }

  private static List<IpRange> parseAll(Collection<String> texts, List<PoolProblem> problems) {
    List<IpRange> out = new ArrayList<>();
    for (String t : texts) {
      try {
        out.add(IpRange.parse(t));
      } catch (InvalidAddressException e) {
        problems.add(new PoolProblem(t, e.getMessage()));
      }
    }
    return out;
  }

  private static boolean coveredBy(IpRange r, List<IpRange> sortedRanges) {
    Ip need = r.first();
    for (IpRange p : sortedRanges) {
      if (p.contains(need)) {
        if (p.last().compareTo(r.last()) >= 0) {
          return true;
        }
        need = p.last().next(); // continue in an adjacent range, if there is one
        if (need == null) {
          return false;
        }
      }
    }
    return false;
  }

  private List<IpRange> usableRanges(IpFamily family) {
    List<IpRange> out = new ArrayList<>();
    for (IpRange r : ranges) {
      if (r.family() != family) {
        continue;
      }
      Ip first = r.first();
      Ip last = r.last();
      if (family == IpFamily.IPV4 && r.isCidr() && r.prefixLength() <= 30) {
        first = first.next();
        last = last.previous();
      }
      out.add(IpRange.of(first, last));
    }
    out.sort(null);
    List<IpRange> res = java.util.stream.Stream.concat(reserved.stream(),
        protocolReserved.stream().map(ProtocolReserved::range)).filter(r -> r.family() == family).sorted().toList();
    List<IpRange> left = new ArrayList<>();
    for (IpRange u : out) {
      left.addAll(SpecialAddresses.minus(u, res));
    }
    return List.copyOf(left);
  }

  /**
   * The pool's name.
   *
   * @return the name given to {@link #of}
   */
  public String name() {
    return name;
  }

  /**
   * The ranges as written.
   *
   * @return the ranges, in the order given
   */
  public List<IpRange> ranges() {
    return ranges;
  }

  /**
   * The addresses the user reserved, as written.
   *
   * @return the reserved ranges, in the order given
   */
  public List<IpRange> reserved() {
    return reserved;
  }

  /**
   * The addresses the pool never hands out whatever it says (special addresses, IPv6 anycast), with the reason.
   *
   * @return the cuts of every range, range by range
   */
  public List<ProtocolReserved> protocolReserved() {
    return protocolReserved;
  }

  /**
   * How many addresses of a family {@link #protocolReserved} takes out (those the user reserved too included).
   *
   * @param family the family
   * @return the count; zero for IPv4 ranges clear of {@link SpecialAddresses}
   */
  public BigInteger protocolReservedCount(IpFamily family) {
    BigInteger total = BigInteger.ZERO;
    for (ProtocolReserved p : protocolReserved) {
      if (p.range().family() == family) {
        total = total.add(p.range().size());
      }
    }
    return total;
  }

  /**
   * The families the pool has ranges in.
   *
   * @return the families, IPv4 first
   */
  public Set<IpFamily> families() {
    return usable.keySet();
  }

  /**
   * The usable ranges of one family: sorted, disjoint, without reserved addresses.
   *
   * @param family the family
   * @return the ranges; empty when the pool has none of the family
   */
  public List<IpRange> usable(IpFamily family) {
    return usable.getOrDefault(family, List.of());
  }

  /**
   * Number of addresses that can be handed out in a family.
   *
   * @param family the family
   * @return the total size of the family's usable ranges
   */
  public BigInteger capacity(IpFamily family) {
    BigInteger total = BigInteger.ZERO;
    for (IpRange r : usable(family)) {
      total = total.add(r.size());
    }
    return total;
  }

  /**
   * Whether an address is in one of the pool's ranges, usable or not.
   *
   * @param ip the address
   * @return true when a range contains it
   */
  public boolean contains(Ip ip) {
    return ranges.stream().anyMatch(r -> r.contains(ip));
  }

  /**
   * Whether an address can be handed out from this pool.
   *
   * @param ip the address
   * @return true when a usable range contains it
   */
  public boolean isUsable(Ip ip) {
    return usable(ip.family()).stream().anyMatch(r -> r.contains(ip));
  }

  /**
   * Why an address cannot be handed out from this pool, or empty when it can.
   *
   * @param ip the address
   * @return a message naming the address and the reason, or empty when it is usable
   */
  public Optional<String> whyUnusable(Ip ip) {
    Optional<IpRange> range = ranges.stream().filter(r -> r.contains(ip)).findFirst();
    if (range.isEmpty()) {
      return Optional.of(ip + " is outside pool '" + name + "'");
    }
    Optional<IpRange> res = reserved.stream().filter(r -> r.contains(ip)).findFirst();
    if (res.isPresent()) {
      return Optional.of(ip + " is reserved in pool '" + name + "' (" + res.get().text() + ")");
    }
    Optional<ProtocolReserved> anycast = protocolReserved.stream().filter(p -> p.range().contains(ip)).findFirst();
    if (anycast.isPresent()) {
      return Optional.of(ip + " is " + anycast.get().reason() + " in " + range.get().text()
          + "; it is never handed out");
    }
    IpRange r = range.get();
    if (!isUsable(ip)) {
      String what = ip.equals(r.first()) ? "network" : "broadcast";
      return Optional.of(ip + " is the " + what + " address of " + r.text());
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    return "Pool[" + name + " " + ranges + (reserved.isEmpty() ? "" : " reserved " + reserved) + "]";
  }
}
