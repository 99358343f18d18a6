package org.ipamoperators.core.address;

import inet.ipaddr.AddressStringException;
import inet.ipaddr.AddressStringParameters.RangeParameters;
import inet.ipaddr.IPAddress;
import inet.ipaddr.IPAddressString;
import inet.ipaddr.IPAddressStringParameters;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one strict reader of address text, used by every entry point (CRDs, annotations, claims, plan
 * files). IPv4 must be four decimal parts without leading zeros, IPv6 the RFC 4291 text forms without
 * zones; an optional decimal prefix length. The library's defaults would also read inet_aton forms,
 * where {@code 192.168.010.0} is octal {@code 192.168.8.0}, {@code 10.1} is {@code 10.0.0.1} and
 * {@code 3232235777} is {@code 192.168.1.1}: a typo would silently become another subnet. Such text is
 * refused with the address the user probably meant.
 */
final class AddressText {

  private static final IPAddressStringParameters STRICT = strict();
  private static final Pattern IPV4_PARTS =
      Pattern.compile("([0-9]+)[.]([0-9]+)[.]([0-9]+)[.]([0-9]+)(/[0-9]+)?");
  private static final Pattern PREFIX_LEADING_ZERO = Pattern.compile(".*/0[0-9]+");
  private static final Pattern DECIMAL_PREFIXED = Pattern.compile("([0-9.]+)(/[0-9]+)?");

  private AddressText() {}

  private static IPAddressStringParameters strict() {
    IPAddressStringParameters.Builder b = new IPAddressStringParameters.Builder()
        .allowEmpty(false)
        .allowAll(false)
        .allowSingleSegment(false)
        .allowMask(false)
        .allowPrefixOnly(false)
        .allowWildcardedSeparator(false)
        .setRangeOptions(RangeParameters.NO_RANGE)
        .allow_inet_aton(false);
    b.getIPv4AddressParametersBuilder()
        .allow_inet_aton(false)
        .allowLeadingZeros(false)
        .allowUnlimitedLeadingZeros(false)
        .allowPrefixLengthLeadingZeros(true) // the library refuses '/0' too; see PREFIX_LEADING_ZERO
        .allowPrefixesBeyondAddressSize(false)
        .allowBinary(false)
        .allowWildcardedSeparator(false)
        .setRangeOptions(RangeParameters.NO_RANGE);
    var v6 = b.getIPv6AddressParametersBuilder()
        .allowZone(false)
        .allowBase85(false)
        .allowBinary(false)
        .allow_mixed_inet_aton(false)
        .allowUnlimitedLeadingZeros(false)
        .allowPrefixLengthLeadingZeros(true) // the library refuses '/0' too; see PREFIX_LEADING_ZERO
        .allowPrefixesBeyondAddressSize(false)
        .allowWildcardedSeparator(false)
        .setRangeOptions(RangeParameters.NO_RANGE);
    v6.getEmbeddedIPv4AddressParametersBuilder()
        .allow_inet_aton(false)
        .allowLeadingZeros(false)
        .allowUnlimitedLeadingZeros(false)
        .allowBinary(false)
        .allowWildcardedSeparator(false)
        .setRangeOptions(RangeParameters.NO_RANGE);
    return b.toParams();
  }

  /**
   * An address, optionally with a prefix length ({@code 192.0.2.0/24}), in strict form.
   *
   * @throws InvalidAddressException naming the text and, for lenient forms, what it probably meant
   */
  static IPAddress parse(String text) {
    if (text.isEmpty()) {
      throw new InvalidAddressException(text, "empty address");
    }
    IPAddress a;
    try {
      if (PREFIX_LEADING_ZERO.matcher(text).matches()) {
        throw new AddressStringException("prefix length with a leading zero");
      }
      a = new IPAddressString(text, STRICT).toAddress();
    } catch (AddressStringException e) {
      String lenient = diagnose(text);
      throw new InvalidAddressException(text, lenient != null ? lenient
          : "'" + text + "' is not an IP address: " + e.getMessage());
    }
    if (a == null || !(a.isIPv4() || a.isIPv6())) {
      throw new InvalidAddressException(text, "'" + text + "' is not an IP address");
    }
    return a;
  }

  /** Why text that only a lenient parser reads is refused, with the fix; null when it is no address. */
  static String diagnose(String text) {
    Matcher m = IPV4_PARTS.matcher(text);
    return m.matches() ? leadingZeros(text, m) : lenientForm(text);
  }

  /** Four dotted decimal parts: refused for a leading zero (octal to some tools), with the decimal form. */
  private static String leadingZeros(String text, Matcher m) {
    StringBuilder fixed = new StringBuilder();
    boolean leadingZero = false;
    for (int i = 1; i <= 4; i++) {
      String part = m.group(i);
      if (part.length() > 3 && part.replaceFirst("^0+", "").length() > 3) {
        return null;
      }
      int value = Integer.parseInt(part.replaceFirst("^0+(?=.)", ""));
      if (value > 255) {
        return null;
      }
      leadingZero |= part.length() > 1 && part.charAt(0) == '0';
      fixed.append(i > 1 ? "." : "").append(value);
    }
    String prefix = m.group(5);
    if (prefix != null) {
      String digits = prefix.substring(1);
      leadingZero |= digits.length() > 1 && digits.charAt(0) == '0';
      fixed.append('/').append(Integer.parseInt(digits.replaceFirst("^0+(?=.)", "")));
    }
    if (leadingZero) {
      return "'" + text + "' has a leading zero, which some tools read as octal (010 is 8); did you mean "
          + fixed + "?";
    }
    return null;
  }

  /** Text a lenient parser reads as an address (one number, fewer parts, a zone, another form): the fix. */
  private static String lenientForm(String text) {
    IPAddress lenient;
    try {
      lenient = new IPAddressString(text).toAddress();
    } catch (AddressStringException e) {
      return null;
    }
    if (lenient == null || (lenient.isMultiple() && !lenient.isPrefixed())) {
      return null;
    }
    Matcher d = DECIMAL_PREFIXED.matcher(text);
    if (lenient.isIPv4() && d.matches() && !d.group(1).contains(".")) {
      return "'" + text + "' is an IPv4 address written as one number; write it as "
          + lenient.getLower().withoutPrefixLength() + (d.group(2) == null ? "" : d.group(2)) + " if that is what you mean";
    }
    if (lenient.isIPv4() && d.matches()) {
      String[] parts = d.group(1).split("[.]", -1);
      StringBuilder padded = new StringBuilder(d.group(1));
      for (int i = parts.length; i < 4; i++) {
        padded.append(".0");
      }
      return "'" + text + "' has " + parts.length + " of the 4 parts of an IPv4 address (some tools read it as "
          + lenient.getLower().withoutPrefixLength() + "); write all four, such as " + padded
          + (d.group(2) == null ? "" : d.group(2));
    }
    if (text.indexOf('%') >= 0) {
      return "'" + text + "' has an IPv6 zone (%...); write the address without it";
    }
    String canonical = lenient.isPrefixed()
        ? lenient.getLower().withoutPrefixLength().toCanonicalString() + "/" + lenient.getNetworkPrefixLength()
        : lenient.toCanonicalString();
    return "'" + text + "' is not in a standard address form; write it as " + canonical
        + " if that is what you mean";
  }
}
