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

  /**
   * Checks the bounds; a null text becomes the canonical spelling of the bounds.
   *
   * @param first the lowest address
   * @param last the highest address, of the same family
   * @param prefixLength the prefix length when written as a CIDR, else {@link #NO_PREFIX}
   * @param text the spelling as written, for messages; null for the canonical one
   * @throws IllegalArgumentException when the families differ or the range starts after it ends
   */
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

  /**
   * The range between two addresses, not written as a CIDR.
   *
   * @param first the lowest address
   * @param last the highest address, of the same family
   * @return the range, spelled canonically
   * @throws IllegalArgumentException when the families differ or first is after last
   */
  public static IpRange of(Ip first, Ip last) {
    return new IpRange(first, last, NO_PREFIX, null);
  }

  /**
   * The range of one address.
   *
   * @param ip the address
   * @return a range whose first and last address is {@code ip}
   */
  public static IpRange single(Ip ip) {
    return new IpRange(ip, ip, NO_PREFIX, null);
  }

  /**
   * Parses an address, a CIDR or a start-end range. A CIDR with host bits set is rejected with the
   * network it probably meant, so that a typo never silently shrinks or moves a pool.
   *
   * @param text the value; surrounding blanks are ignored
   * @return the range, keeping the spelling
   * @throws InvalidAddressException when the text is none of the three spellings
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

  /**
   * The family of the range's addresses.
   *
   * @return the family
   */
  public IpFamily family() {
    return first.family();
  }

  /**
   * Whether the range was written as a CIDR.
   *
   * @return true when it has a prefix length
   */
  public boolean isCidr() {
    return prefixLength != NO_PREFIX;
  }

  /**
   * The number of addresses in the range, bounds included.
   *
   * @return at least one
   */
  public BigInteger size() {
    return last.toBigInteger().subtract(first.toBigInteger()).add(BigInteger.ONE);
  }

  /**
   * Whether an address is in the range.
   *
   * @param ip the address
   * @return true when it is of the same family and between the bounds
   */
  public boolean contains(Ip ip) {
    return ip.family() == family() && first.compareTo(ip) <= 0 && ip.compareTo(last) <= 0;
  }

  /**
   * Whether another range lies wholly in this one.
   *
   * @param other the other range
   * @return true when both of its bounds are in this range
   */
  public boolean contains(IpRange other) {
    return contains(other.first) && contains(other.last);
  }

  /**
   * Whether two ranges share at least one address.
   *
   * @param other the other range
   * @return true when they are of the same family and intersect
   */
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
