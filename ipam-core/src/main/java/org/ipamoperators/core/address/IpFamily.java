package org.ipamoperators.core.address;

/** The two address families, with their bit widths. */
public enum IpFamily {
  IPV4(32),
  IPV6(128);

  private final int bits;

  IpFamily(int bits) {
    this.bits = bits;
  }

  public int bits() {
    return bits;
  }

  /** The Kubernetes spelling, as in a Service's {@code ipFamilies}. */
  public String kubernetesName() {
    return this == IPV4 ? "IPv4" : "IPv6";
  }
}
