package org.ipamoperators.core.pool;

import java.util.ArrayList;
import java.util.List;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.address.IpRange;

/**
 * IPv6 addresses of a pool range that must never be handed out, because routers answer them as
 * anycast: the Subnet-Router anycast address of a /64 (interface ID 0, RFC 4291 section 2.6.1) and
 * the reserved subnet anycast addresses (RFC 2526): interface IDs {@code fdff:ffff:ffff:ff80} to
 * {@code fdff:ffff:ffff:ffff} (the modified EUI-64 form, which Linux also refuses, RFC 5453) and the
 * top 128 interface IDs {@code ffff:ffff:ffff:ff80} to {@code ffff:ffff:ffff:ffff} (the form for
 * other interface IDs). Cut in the first and the last /64 a range touches: the ranges are never
 * enumerated, and an allocator reaches an inner /64's anycast address only after 2^64 first-free
 * allocations or, at random, with a chance of 257 in 2^64 per address.
 *
 * <p>A single address and a /127 (a point-to-point link, RFC 6164) are used as written, like an
 * IPv4 /31 or /32.
 *
 * @param range the addresses cut
 * @param reason why, for messages
 */
public record ProtocolReserved(IpRange range, String reason) {

  private static final long EUI64_ANYCAST = 0xfdffffffffffff80L;
  private static final long TOP_ANYCAST = 0xffffffffffffff80L;

  /**
   * The cuts of one pool range, in address order; empty for IPv4, single addresses and a /127.
   *
   * @param r a range of a pool
   * @return the cuts, each clipped to the range
   */
  public static List<ProtocolReserved> of(IpRange r) {
    List<ProtocolReserved> out = new ArrayList<>();
    if (r.family() != IpFamily.IPV6 || r.first().equals(r.last()) || r.prefixLength() == 127) {
      return out;
    }
    long firstNet = r.first().hi();
    long lastNet = r.last().hi();
    for (long net : firstNet == lastNet ? new long[] {firstNet} : new long[] {firstNet, lastNet}) {
      cut(out, r, new Ip(IpFamily.IPV6, net, 0), new Ip(IpFamily.IPV6, net, 0),
          "the Subnet-Router anycast address of its /64 (RFC 4291 2.6.1)");
      cut(out, r, new Ip(IpFamily.IPV6, net, EUI64_ANYCAST), new Ip(IpFamily.IPV6, net, EUI64_ANYCAST | 0x7f),
          "a reserved subnet anycast address of its /64 (RFC 2526)");
      cut(out, r, new Ip(IpFamily.IPV6, net, TOP_ANYCAST), new Ip(IpFamily.IPV6, net, -1L),
          "a reserved subnet anycast address of its /64 (RFC 2526)");
    }
    return out;
  }

  private static void cut(List<ProtocolReserved> out, IpRange r, Ip from, Ip to, String reason) {
    Ip a = from.compareTo(r.first()) < 0 ? r.first() : from;
    Ip b = to.compareTo(r.last()) > 0 ? r.last() : to;
    if (a.compareTo(b) <= 0) {
      out.add(new ProtocolReserved(IpRange.of(a, b), reason));
    }
  }
}
