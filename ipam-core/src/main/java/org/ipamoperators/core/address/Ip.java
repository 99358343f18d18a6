package org.ipamoperators.core.address;

import inet.ipaddr.IPAddress;
import inet.ipaddr.ipv4.IPv4Address;
import inet.ipaddr.ipv6.IPv6Address;
import java.math.BigInteger;
import java.util.Objects;

/**
 * One IPv4 or IPv6 address as a value: the family and the address as an unsigned 128-bit number
 * (IPv4 uses only the low 32 bits). Compact and cheap to compare, which the allocator needs; parsing
 * and formatting go through seancfoley's IPAddress. Orders IPv4 before IPv6, then numerically.
 */
public record Ip(IpFamily family, long hi, long lo) implements Comparable<Ip> {

  /**
   * Checks the value against the family.
   *
   * @param family the address family
   * @param hi the high 64 bits of the address; 0 for IPv4
   * @param lo the low 64 bits of the address; an IPv4 address uses only the low 32
   * @throws IllegalArgumentException when an IPv4 value does not fit in 32 bits
   */
  public Ip {
    Objects.requireNonNull(family, "family");
    if (family == IpFamily.IPV4 && (hi != 0 || (lo >>> 32) != 0)) {
      throw new IllegalArgumentException("IPv4 value out of range");
    }
  }

  /**
   * An IPv4 address from its 32-bit value.
   *
   * @param value the address as an unsigned 32-bit number
   * @return the address
   * @throws IllegalArgumentException when the value does not fit in 32 bits
   */
  public static Ip v4(long value) {
    return new Ip(IpFamily.IPV4, 0, value);
  }

  /**
   * Parses a single address; a prefix or range is an error.
   *
   * @param text an IPv4 or IPv6 address; surrounding blanks are ignored
   * @return the address
   * @throws InvalidAddressException when the text is not one address
   */
  public static Ip parse(String text) {
    String t = text == null ? "" : text.trim();
    IPAddress a = parseLibrary(t);
    if (a.isPrefixed() || a.isMultiple()) {
      throw new InvalidAddressException(text, "'" + text + "' is not a single address"
          + (a.isPrefixed() ? "; write it without the /" + a.getNetworkPrefixLength() : ""));
    }
    return of(a);
  }

  /**
   * Converts a library address (its lowest value when it is a subnet).
   *
   * @param address the library address
   * @return the address, or the subnet's lowest address, without prefix
   */
  public static Ip of(IPAddress address) {
    IPAddress lower = address.getLower().withoutPrefixLength();
    return fromBigInteger(lower.isIPv4() ? IpFamily.IPV4 : IpFamily.IPV6, lower.getValue());
  }

  /**
   * An address from its numeric value.
   *
   * @param family the address family
   * @param value the address as an unsigned number of the family's width
   * @return the address
   * @throws IllegalArgumentException when the value is negative or too wide for the family
   */
  public static Ip fromBigInteger(IpFamily family, BigInteger value) {
    if (value.signum() < 0 || value.bitLength() > family.bits()) {
      throw new IllegalArgumentException(value + " is not an " + family + " address value");
    }
    return new Ip(family, value.shiftRight(64).longValue(), value.longValue());
  }

  /** Strict: see {@link AddressText}; lenient forms such as {@code 010.0.0.1} are refused. */
  static IPAddress parseLibrary(String text) {
    return AddressText.parse(text);
  }

  /**
   * Whether this is an IPv4 address.
   *
   * @return true for IPv4, false for IPv6
   */
  public boolean isIPv4() {
    return family == IpFamily.IPV4;
  }

  /**
   * The address as a number, for arithmetic and sizes.
   *
   * @return the address as a non-negative number
   */
  public BigInteger toBigInteger() {
    byte[] b = new byte[17];
    for (int i = 0; i < 8; i++) {
      b[1 + i] = (byte) (hi >>> (56 - 8 * i));
      b[9 + i] = (byte) (lo >>> (56 - 8 * i));
    }
    return new BigInteger(b);
  }

  /**
   * The library's address object, for richer operations.
   *
   * @return the same address as a library address, without prefix
   */
  public IPAddress toIPAddress() {
    if (isIPv4()) {
      return new IPv4Address((int) lo);
    }
    byte[] b = new byte[16];
    for (int i = 0; i < 8; i++) {
      b[i] = (byte) (hi >>> (56 - 8 * i));
      b[8 + i] = (byte) (lo >>> (56 - 8 * i));
    }
    return new IPv6Address(b);
  }

  /**
   * The next address, or null past the family's last.
   *
   * @return the address one higher, or null when this is the family's last address
   */
  public Ip next() {
    long nlo = lo + 1;
    long nhi = nlo == 0 ? hi + 1 : hi;
    if (isIPv4()) {
      return (nlo >>> 32) != 0 ? null : new Ip(family, 0, nlo);
    }
    return nhi == 0 && nlo == 0 ? null : new Ip(family, nhi, nlo);
  }

  /**
   * The previous address, or null before the family's first.
   *
   * @return the address one lower, or null when this is the family's first address
   */
  public Ip previous() {
    if (hi == 0 && lo == 0) {
      return null;
    }
    long plo = lo - 1;
    long phi = lo == 0 ? hi - 1 : hi;
    return new Ip(family, phi, plo);
  }

  @Override
  public int compareTo(Ip o) {
    int c = family.compareTo(o.family);
    if (c != 0) {
      return c;
    }
    c = Long.compareUnsigned(hi, o.hi);
    return c != 0 ? c : Long.compareUnsigned(lo, o.lo);
  }

  /** Canonical text: dotted quad, or RFC 5952 compressed IPv6. */
  @Override
  public String toString() {
    if (isIPv4()) {
      return ((lo >>> 24) & 0xff) + "." + ((lo >>> 16) & 0xff) + "." + ((lo >>> 8) & 0xff) + "."
          + (lo & 0xff);
    }
    return toIPAddress().toCanonicalString();
  }
}
