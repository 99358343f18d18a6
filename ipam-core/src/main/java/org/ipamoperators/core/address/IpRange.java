package org.ipamoperators.core.address;

import inet.ipaddr.IPAddress;
import java.math.BigInteger;
import java.util.Objects;

/**
 * An inclusive range of addresses of one family. {@link #parse} accepts the three spellings used
 * in pools: a single address, a CIDR ({@code 10.0.0.0/24}) and a start-end range
 * ({@code 10.0.0.10-10.0.0.20}); {@code text} keeps the spelling for messages.
 */
public record IpRange(Ip first, Ip last, int prefixLength, String text) implements Comparable<IpRange> {

  /** Marks a range that was not written as a CIDR. */
  public static final int NO_PREFIX = -1;

  public IpRange {
    Objects.requireNonNull(first, "first");
    Objects.requireNonNull(last, "last");
    if (first.family() != last.family()) {
      throw new IllegalArgumentException("range mixes families: " + first + "-" + last);
    }
    if (first.compareTo(last) > 0) {
      throw new IllegalArgumentException("range starts after it ends: " + first + "-" + last);
    }
    if (text == null) {
      text = first.equals(last) ? first.toString() : first + "-" + last;
    }
  }

  public static IpRange of(Ip first, Ip last) {
    return new IpRange(first, last, NO_PREFIX, null);
  }

  public static IpRange single(Ip ip) {
    return new IpRange(ip, ip, NO_PREFIX, null);
  }

  /**
   * Parses an address, a CIDR or a start-end range. A CIDR with host bits set is rejected with the
   * network it probably meant, so that a typo never silently shrinks or moves a pool.
   */
  public static IpRange parse(String text) {
    String t = text == null ? "" : text.trim();
    if (t.isEmpty()) {
      throw new InvalidAddressException(text, "empty value: expected an address, a CIDR such as "
          + "192.0.2.0/24 or a range such as 192.0.2.10-192.0.2.20");
    }
    int dash = t.indexOf('-');
    if (dash >= 0) {
      Ip start = single(t.substring(0, dash).trim(), text);
      Ip end = single(t.substring(dash + 1).trim(), text);
      if (start.family() != end.family()) {
        throw new InvalidAddressException(text, "range '" + text + "' mixes IPv4 and IPv6");
      }
      if (start.compareTo(end) > 0) {
        throw new InvalidAddressException(text, "range '" + text + "' starts after it ends; write "
            + end + "-" + start);
      }
      return new IpRange(start, end, NO_PREFIX, t);
    }
    IPAddress a;
    try {
      a = Ip.parseLibrary(t);
    } catch (InvalidAddressException e) {
      String lenient = AddressText.diagnose(t);
      throw new InvalidAddressException(text, lenient != null ? lenient : "'" + text + "' is not an "
          + "address, a CIDR such as 192.0.2.0/24 or a range such as 192.0.2.10-192.0.2.20");
    }
    if (!a.isPrefixed()) {
      if (a.isMultiple()) {
        throw new InvalidAddressException(text, "'" + text + "' is not an address, a CIDR or a "
            + "start-end range");
      }
      Ip ip = Ip.of(a);
      return new IpRange(ip, ip, NO_PREFIX, t);
    }
    int prefix = a.getNetworkPrefixLength();
    IPAddress block = a.toPrefixBlock();
    if (!a.getLower().withoutPrefixLength().equals(block.getLower().withoutPrefixLength())) {
      throw new InvalidAddressException(text, "CIDR '" + text + "' has host bits set; did you mean "
          + block.getLower().withoutPrefixLength() + "/" + prefix + "?");
    }
    Ip first = Ip.of(block.getLower());
    Ip last = Ip.of(block.getUpper());
    return new IpRange(first, last, prefix, t);
  }

  private static Ip single(String part, String whole) {
    try {
      return Ip.parse(part);
    } catch (InvalidAddressException e) {
      String lenient = AddressText.diagnose(part);
      if (lenient != null) {
        throw new InvalidAddressException(whole, "range '" + whole + "': " + lenient);
      }
      throw new InvalidAddressException(whole, "'" + whole + "' is not an address, a CIDR such as "
          + "192.0.2.0/24 or a range such as 192.0.2.10-192.0.2.20 ('" + part
          + "' is not a single address)");
    }
  }

  public IpFamily family() {
    return first.family();
  }

  public boolean isCidr() {
    return prefixLength != NO_PREFIX;
  }

  public BigInteger size() {
    return last.toBigInteger().subtract(first.toBigInteger()).add(BigInteger.ONE);
  }

  public boolean contains(Ip ip) {
    return ip.family() == family() && first.compareTo(ip) <= 0 && ip.compareTo(last) <= 0;
  }

  public boolean contains(IpRange other) {
    return contains(other.first) && contains(other.last);
  }

  public boolean overlaps(IpRange other) {
    return other.family() == family() && first.compareTo(other.last) <= 0
        && other.first.compareTo(last) <= 0;
  }

  @Override
  public int compareTo(IpRange o) {
    int c = first.compareTo(o.first);
    return c != 0 ? c : last.compareTo(o.last);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IpRange r && r.first.equals(first) && r.last.equals(last);
  }

  @Override
  public int hashCode() {
    return first.hashCode() * 31 + last.hashCode();
  }

  @Override
  public String toString() {
    return text;
  }
}
