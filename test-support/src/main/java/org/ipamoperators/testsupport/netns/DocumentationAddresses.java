package org.ipamoperators.testsupport.netns;

/**
 * Addresses from the ranges reserved for documentation (RFC 5737 192.0.2.0/24, RFC 3849 2001:db8::/32), for use
 * inside network namespaces only.
 */
public final class DocumentationAddresses {

  /** The IPv4 prefix length {@link #ipv4Cidr} uses. */
  public static final int IPV4_PREFIX = 24;
  /** The IPv6 prefix length {@link #ipv6Cidr} uses. */
  public static final int IPV6_PREFIX = 64;

  private DocumentationAddresses() {
  }

  /** {@code 192.0.2.<host>}, host in 1..254. */
  public static String ipv4(int host) {
    if (host < 1 || host > 254) {
      throw new IllegalArgumentException("host must be in 1..254: " + host);
    }
    return "192.0.2." + host;
  }

  /** {@code 192.0.2.<host>/24}. */
  public static String ipv4Cidr(int host) {
    return ipv4(host) + "/" + IPV4_PREFIX;
  }

  /** {@code 2001:db8::<host in hex>}, host in 1..65535. */
  public static String ipv6(int host) {
    if (host < 1 || host > 0xffff) {
      throw new IllegalArgumentException("host must be in 1..65535: " + host);
    }
    return "2001:db8::" + Integer.toHexString(host);
  }

  /** {@code 2001:db8::<host>/64}. */
  public static String ipv6Cidr(int host) {
    return ipv6(host) + "/" + IPV6_PREFIX;
  }
}
