package org.ipamoperators.cloud.aws.eip;

import java.util.List;

/** A network interface attached to an instance: its id, device index and every private IPv4 address it holds. */
public record InstanceInterface(String networkInterfaceId, int deviceIndex, List<String> privateIps) {
  public InstanceInterface {
    privateIps = List.copyOf(privateIps);
  }
}
