package org.ipamoperators.testsupport.arm;

import java.util.List;
import java.util.Optional;

/** A subnet of a {@link Vnet}, with one or more prefixes (IPv4 and/or IPv6). */
final class Subnet {
  final Vnet vnet;
  final String name;
  final List<Cidr> prefixes;

  Subnet(Vnet vnet, String name, List<Cidr> prefixes) {
    this.vnet = vnet;
    this.name = name;
    this.prefixes = prefixes;
  }

  String id() {
    return vnet.id() + "/subnets/" + name;
  }

  Optional<Cidr> prefixFor(String ip) {
    return prefixes.stream().filter(c -> c.contains(ip)).findFirst();
  }
}
