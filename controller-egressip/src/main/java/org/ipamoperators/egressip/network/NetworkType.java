package org.ipamoperators.egressip.network;

/** Which cluster network carries the egress IPs, as found from the APIs the cluster serves. */
public enum NetworkType {
  OPENSHIFT_SDN("OpenShiftSDN"),
  OVN_KUBERNETES("OVNKubernetes"),
  NONE("None");

  private final String display;

  NetworkType(String display) {
    this.display = display;
  }

  public String display() {
    return display;
  }
}
