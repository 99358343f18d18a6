package org.ipamoperators.core.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.address.IpRange;

/**
 * Addresses no pool hands out and no controller publishes or announces, whoever asks: they are not
 * addresses of one host on a shared network (IANA special-purpose registries, RFC 6890 and updates).
 * IPv4: 0.0.0.0/8 (with the unspecified 0.0.0.0), loopback 127.0.0.0/8, link-local 169.254.0.0/16
 * (with the cloud metadata address 169.254.169.254), multicast 224.0.0.0/4, reserved 240.0.0.0/4
 * (with the limited broadcast 255.255.255.255). IPv6: the unspecified {@code ::}, loopback
 * {@code ::1}, IPv4-mapped {@code ::ffff:0:0/96}, link-local {@code fe80::/10}, multicast
 * {@code ff00::/8}; and, relative to a pool range, the Subnet-Router anycast address of an IPv6 CIDR
 * of any prefix length (its all-zero host address, RFC 4291 2.6.1), see {@link #subnetRouterAnycast}.
 *
 * <p>Everything is range arithmetic on a dozen blocks: no range is ever walked address by address.
 */
public final class SpecialAddresses {

  /**
   * One block of the table.
   *
   * @param range the addresses
   * @param what what they are, for messages
   */
  public record Block(IpRange range, String what) {}

  /** Narrowest first, so that an address is named by the most precise block that holds it. */
  private static final List<Block> BLOCKS = List.of(
      block("0.0.0.0/32", "the unspecified address (RFC 1122)"),
      block("0.0.0.0/8", "in 'this network' 0.0.0.0/8 (RFC 1122), never a destination"),
      block("127.0.0.0/8", "loopback (127.0.0.0/8, RFC 1122)"),
      block("169.254.169.254/32", "the cloud instance metadata address (link-local 169.254.0.0/16)"),
      block("169.254.0.0/16", "link-local (169.254.0.0/16, RFC 3927)"),
      block("224.0.0.0/4", "multicast (224.0.0.0/4, RFC 5771)"),
      block("255.255.255.255/32", "the limited broadcast address (RFC 919)"),
      block("240.0.0.0/4", "reserved (240.0.0.0/4, RFC 1112)"),
      block("::/128", "the unspecified address (RFC 4291)"),
      block("::1/128", "loopback (::1, RFC 4291)"),
      block("::ffff:0:0/96", "IPv4-mapped IPv6 (::ffff:0:0/96, RFC 4291): no interface or route carries it;"
          + " write the IPv4 addresses as IPv4"),
      block("fe80::/10", "link-local (fe80::/10, RFC 4291)"),
      block("ff00::/8", "multicast (ff00::/8, RFC 4291)"));

  private SpecialAddresses() {}

  private static Block block(String cidr, String what) {
    return new Block(IpRange.parse(cidr), what);
  }

  /**
   * The table, narrowest blocks first; blocks may nest (0.0.0.0 in 0.0.0.0/8).
   *
   * @return every block
   */
  public static List<Block> blocks() {
    return BLOCKS;
  }

  /**
   * The narrowest block that holds an address.
   *
   * @param ip the address
   * @return the block, or empty for an address that may be published
   */
  public static Optional<Block> find(Ip ip) {
    return BLOCKS.stream().filter(b -> b.range().contains(ip)).findFirst();
  }

  /**
   * Why an address is never announced, for an Event.
   *
   * @param ip the address
   * @return "&lt;ip&gt; is &lt;what&gt;", or empty for an address that may be announced
   */
  public static Optional<String> whyNeverAnnounced(Ip ip) {
    return find(ip).map(b -> ip + " is " + b.what());
  }

  /**
   * The parts of a range in the table, disjoint and in address order, each named by the narrowest block.
   *
   * @param r a range
   * @return the parts; empty when the range holds no such address
   */
  public static List<Block> within(IpRange r) {
    List<Block> out = new ArrayList<>();
    for (Block b : BLOCKS) {
      if (b.range().overlaps(r)) {
        Ip first = max(b.range().first(), r.first());
        Ip last = min(b.range().last(), r.last());
        for (IpRange piece : minus(IpRange.of(first, last), out.stream().map(Block::range).toList())) {
          out.add(new Block(piece, b.what()));
        }
      }
    }
    out.sort((x, y) -> x.range().compareTo(y.range()));
    return out;
  }

  /**
   * The Subnet-Router anycast address of a pool range (RFC 4291 2.6.1): the all-zero host address of
   * an IPv6 CIDR with a host part, whatever its prefix length. A range written without a prefix is
   * no subnet, and a /128 has no host part.
   *
   * @param r a pool range
   * @return the address, or empty
   */
  public static Optional<Ip> subnetRouterAnycast(IpRange r) {
    boolean subnet = r.family() == IpFamily.IPV6 && r.isCidr() && r.prefixLength() < 128;
    return subnet ? Optional.of(r.first()) : Optional.empty();
  }

  /** What is left of a range once some others are taken out. */
  static List<IpRange> minus(IpRange r, List<IpRange> taken) {
    List<IpRange> out = new ArrayList<>(List.of(r));
    for (IpRange cut : taken) {
      List<IpRange> next = new ArrayList<>();
      for (IpRange u : out) {
        if (!u.overlaps(cut)) {
          next.add(u);
          continue;
        }
        if (u.first().compareTo(cut.first()) < 0) {
          next.add(IpRange.of(u.first(), cut.first().previous()));
        }
        if (cut.last().compareTo(u.last()) < 0) {
          next.add(IpRange.of(cut.last().next(), u.last()));
        }
      }
      out = next;
    }
    return out;
  }

  private static Ip max(Ip a, Ip b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  private static Ip min(Ip a, Ip b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
