package org.ipamoperators.testsupport.arm;

import inet.ipaddr.AddressStringException;
import inet.ipaddr.IPAddress;
import inet.ipaddr.IPAddressString;
import inet.ipaddr.ipv4.IPv4Address;
import inet.ipaddr.ipv6.IPv6Address;
import java.math.BigInteger;

/** An address prefix such as {@code 10.0.1.0/24} or {@code 2001:db8::/64}, for the ARM server's checks. */
record Cidr(String text, BigInteger base, int prefix, boolean v4) {

  static Cidr parse(String text) {
    if (text.indexOf('/') < 0) {
      throw new IllegalArgumentException("not a prefix: " + text);
    }
    IPAddress block = address(text).toPrefixBlock();
    return new Cidr(text, block.getValue(), block.getNetworkPrefixLength(), block.isIPv4());
  }

  static BigInteger toNumber(String ip) {
    return address(ip.trim()).getValue();
  }

  /** Whether {@code ip} is one address literal: dotted quad or IPv6 text, no prefix, no host name. */
  static boolean isAddress(String ip) {
    if (ip == null || ip.isBlank() || ip.contains("/")
        || !ip.contains(":") && !ip.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
      return false;
    }
    IPAddressString s = new IPAddressString(ip);
    return s.isIPAddress() && !s.getAddress().isMultiple();
  }

  /** The canonical text (RFC 5952 for IPv6) of the address {@code n}. */
  static String toText(BigInteger n, boolean v4) {
    return v4 ? new IPv4Address(n.intValue()).toCanonicalString() : new IPv6Address(n).toCanonicalString();
  }

  private static IPAddress address(String text) {
    try {
      return new IPAddressString(text).toAddress();
    } catch (AddressStringException e) {
      throw new IllegalArgumentException("not an address: " + text, e);
    }
  }

  int bits() {
    return v4 ? IPv4Address.BIT_COUNT : IPv6Address.BIT_COUNT;
  }

  BigInteger last() {
    return base.add(size()).subtract(BigInteger.ONE);
  }

  boolean contains(String ip) {
    if (ip.contains(":") == v4) {
      return false;
    }
    BigInteger n = toNumber(ip);
    return n.compareTo(base) >= 0 && n.compareTo(last()) <= 0;
  }

  /** The first four and the last address: what Azure keeps in every subnet. */
  boolean reserved(String ip) {
    BigInteger n = toNumber(ip);
    return n.subtract(base).compareTo(BigInteger.valueOf(4)) < 0 || n.equals(last());
  }

  BigInteger size() {
    return BigInteger.ONE.shiftLeft(bits() - prefix);
  }
}
