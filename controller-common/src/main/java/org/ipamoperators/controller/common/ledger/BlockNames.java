package org.ipamoperators.controller.common.ledger;

import org.ipamoperators.core.address.Ip;

/**
 * Blocks are fixed: 64 addresses, a /26 of IPv4 or a /122 of IPv6, aligned on their size. A block
 * is named after its first address and prefix length: {@code 192.0.2.64-26}, or for IPv6 the full
 * eight-group dashed form of {@link ClaimNames} ({@code 2001-0db8-0000-0000-0000-0000-0000-0040-122}),
 * both valid DNS-1123 subdomains.
 */
public final class BlockNames {
  /** Addresses per block. */
  public static final int SIZE = 64;
  public static final int IPV4_PREFIX = 26;
  public static final int IPV6_PREFIX = 122;

  private BlockNames() {}

  /** The first address of the block that holds {@code ip}. */
  public static Ip base(Ip ip) {
    return new Ip(ip.family(), ip.hi(), ip.lo() & ~(long) (SIZE - 1));
  }

  public static int prefix(Ip ip) {
    return ip.isIPv4() ? IPV4_PREFIX : IPV6_PREFIX;
  }

  /** The block's CIDR in the usual notation, e.g. {@code 192.0.2.64/26}. */
  public static String cidr(Ip ip) {
    return base(ip) + "/" + prefix(ip);
  }

  /** The name of the IPBlock object that holds {@code ip}. */
  public static String of(Ip ip) {
    return ClaimNames.of(base(ip)) + "-" + prefix(ip);
  }
}
