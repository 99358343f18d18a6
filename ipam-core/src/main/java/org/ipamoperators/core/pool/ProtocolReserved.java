package org.ipamoperators.core.pool;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.address.IpRange;

/**
 * Addresses of a pool range that are never handed out whatever the pool says: those of
 * {@link SpecialAddresses} (loopback, link-local, multicast, ...), and the IPv6 addresses routers
 * answer as anycast. Those are the Subnet-Router anycast address of the range itself when it is a
 * CIDR of any prefix length up to /127, and, in the first and the last /64 the range touches, the
 * Subnet-Router anycast address of the /64 (interface ID 0, RFC 4291 section 2.6.1) and the reserved
 * subnet anycast addresses (RFC 2526): interface IDs {@code fdff:ffff:ffff:ff80} to
 * {@code fdff:ffff:ffff:ffff} (the modified EUI-64 form, which Linux also refuses, RFC 5453) and the
 * top 128 interface IDs {@code ffff:ffff:ffff:ff80} to {@code ffff:ffff:ffff:ffff}. The ranges are
 * never enumerated: an allocator reaches an inner /64's anycast address only after 2^64 first-free
 * allocations or, at random, with a chance of 257 in 2^64 per address.
 *
 * @param range the addresses cut
 * @param reason why, for messages
 */
public record ProtocolReserved(IpRange range, String reason) {

  private static final long EUI64_ANYCAST = 0xfdffffffffffff80L;
  private static final long TOP_ANYCAST = 0xffffffffffffff80L;
  private static final String RFC2526 = "a reserved subnet anycast address of its /64 (RFC 2526)";

  /**
   * The cuts of one pool range: disjoint, in address order, each clipped to the range.
   *
   * @param r a range of a pool
   * @return the cuts; empty for most IPv4 ranges
   */
  public static List<ProtocolReserved> of(IpRange r) {
    List<ProtocolReserved> out = new ArrayList<>();
    for (SpecialAddresses.Block b : SpecialAddresses.within(r)) {
      out.add(new ProtocolReserved(b.range(), b.what()));
    }
    if (r.family() == IpFamily.IPV6) {
      long firstNet = r.first().hi();
      long lastNet = r.last().hi();
      for (long net : firstNet == lastNet ? new long[] {firstNet} : new long[] {firstNet, lastNet}) {
        cut(out, r, new Ip(IpFamily.IPV6, net, 0), new Ip(IpFamily.IPV6, net, 0),
            "the Subnet-Router anycast address of its /64 (RFC 4291 2.6.1)");
        cut(out, r, new Ip(IpFamily.IPV6, net, EUI64_ANYCAST), new Ip(IpFamily.IPV6, net, EUI64_ANYCAST | 0x7f),
            RFC2526);
        cut(out, r, new Ip(IpFamily.IPV6, net, TOP_ANYCAST), new Ip(IpFamily.IPV6, net, -1L), RFC2526);
      }
      SpecialAddresses.subnetRouterAnycast(r).ifPresent(ip -> cut(out, r, ip, ip,
          "the Subnet-Router anycast address of " + r.text() + " (RFC 4291 2.6.1)"));
    }
    out.sort((x, y) -> x.range().compareTo(y.range()));
    return out;
  }

  /**
   * Whether the cuts leave nothing of a range.
   *
   * @param r a range of a pool
   * @param cuts its cuts, from {@link #of}
   * @return true when every address of the range is cut
   */
  static boolean coverAll(IpRange r, List<ProtocolReserved> cuts) {
    return cuts.stream().map(c -> c.range().size()).reduce(BigInteger.ZERO, BigInteger::add).equals(r.size());
  }

  /** Adds what of {@code from}-{@code to} lies in the range and is not cut yet. */
  private static void cut(List<ProtocolReserved> out, IpRange r, Ip from, Ip to, String reason) {
    Ip a = from.compareTo(r.first()) < 0 ? r.first() : from;
    Ip b = to.compareTo(r.last()) > 0 ? r.last() : to;
    if (a.compareTo(b) <= 0) {
      List<IpRange> taken = out.stream().map(ProtocolReserved::range).toList();
      for (IpRange piece : SpecialAddresses.minus(IpRange.of(a, b), taken)) {
        out.add(new ProtocolReserved(piece, reason));
      }
    }
  }
}
