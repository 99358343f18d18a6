package org.ipamoperators.core.address;

/** The two address families, with their bit widths. */
public enum IpFamily {
  /** IPv4: 32-bit addresses. */
  IPV4(32),
  /** IPv6: 128-bit addresses. */
  IPV6(128);

  private final int bits;

  IpFamily(int bits) {
    this.bits = bits;
  }

  /**
   * The width of the family's addresses.
   *
   * @return 32 for IPv4, 128 for IPv6
   */
  public int bits() {
    return bits;
  }

  /**
   * The Kubernetes spelling, as in a Service's {@code ipFamilies}.
   *
   * @return {@code IPv4} or {@code IPv6}
   */
  public String kubernetesName() {
    return this == IPV4 ? "IPv4" : "IPv6";
  }
}
