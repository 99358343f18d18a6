package org.ipamoperators.controller.common.kube;

/**
 * Admission patterns of address fields, shared by the CRDs. IPv4 parts are decimal without leading
 * zeros, because a lenient reader takes {@code 010} as octal 8 and a typo would silently become another
 * subnet; ipam-core's parser refuses the same forms with the address probably meant, for objects
 * admitted before these patterns existed.
 */
public final class AddressPatterns {
  /** One CIDR, IPv4 or IPv6. */
  public static final String CIDR =
      "^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])([.](25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}/(3[0-2]|[12]?[0-9])|[0-9a-fA-F:]*:[0-9a-fA-F:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$";
  /** An address, a CIDR or a start-end range, IPv4 or IPv6. */
  public static final String ADDRESS_CIDR_OR_RANGE =
      "^ *((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])([.](25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}(/(3[0-2]|[12]?[0-9])| *- *(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])([.](25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3})?|[0-9a-fA-F:]*:[0-9a-fA-F:.]*(/(12[0-8]|1[01][0-9]|[1-9]?[0-9])| *- *[0-9a-fA-F:]*:[0-9a-fA-F:.]*)?) *$";

  private AddressPatterns() {}
}
