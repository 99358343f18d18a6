package org.ipamoperators.keepalived.config;

import java.util.Objects;
import java.util.Optional;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;

/**
 * A node that runs the group's keepalived (a scheduled DaemonSet pod): its name, its host addresses (the pod's
 * {@code status.hostIPs}, at most one per family; the unicast peers of the other nodes) and, when the group uses
 * {@code interfaceFromIP}, the interface that address resolved to on this node.
 */
public record KeepalivedNode(String name, Optional<Ip> ipv4, Optional<Ip> ipv6, Optional<String> interfaceName) {

  public KeepalivedNode {
    KubernetesNames.requireName("Node name", name);
    Objects.requireNonNull(ipv4, "ipv4");
    Objects.requireNonNull(ipv6, "ipv6");
    Objects.requireNonNull(interfaceName, "interfaceName");
    ipv4.ifPresent(ip -> requireFamily(ip, IpFamily.IPV4));
    ipv6.ifPresent(ip -> requireFamily(ip, IpFamily.IPV6));
    interfaceName.ifPresent(GroupSettings::requireInterfaceName);
  }

  /** A node with these host addresses (IPv4 and/or IPv6, one each at most) and the group's interface. */
  public static KeepalivedNode of(String name, String... addresses) {
    Optional<Ip> v4 = Optional.empty();
    Optional<Ip> v6 = Optional.empty();
    for (String text : addresses) {
      Ip ip = Ip.parse(text);
      if (ip.isIPv4()) {
        if (v4.isPresent()) {
          throw new IllegalArgumentException("Node " + name + " has two IPv4 addresses");
        }
        v4 = Optional.of(ip);
      } else {
        if (v6.isPresent()) {
          throw new IllegalArgumentException("Node " + name + " has two IPv6 addresses");
        }
        v6 = Optional.of(ip);
      }
    }
    return new KeepalivedNode(name, v4, v6, Optional.empty());
  }

  /** This node with its own interface name (resolved from the group's {@code interfaceFromIP}). */
  public KeepalivedNode withInterface(String interfaceName) {
    return new KeepalivedNode(name, ipv4, ipv6, Optional.of(interfaceName));
  }

  /** The host address of {@code family}, if the node has one. */
  public Optional<Ip> address(IpFamily family) {
    return family == IpFamily.IPV4 ? ipv4 : ipv6;
  }

  private static void requireFamily(Ip ip, IpFamily family) {
    if (ip.family() != family) {
      throw new IllegalArgumentException(ip + " is not an " + family + " address");
    }
  }
}
