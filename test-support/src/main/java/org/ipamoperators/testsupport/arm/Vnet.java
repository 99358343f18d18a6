package org.ipamoperators.testsupport.arm;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A virtual network as seeded: its address space and its subnets by lower-case name. */
final class Vnet {
  final String subscription;
  final String rg;
  final String name;
  final List<String> prefixes;
  final Map<String, Subnet> subnets = new LinkedHashMap<>();

  Vnet(String subscription, String rg, String name, List<String> prefixes) {
    this.subscription = subscription;
    this.rg = rg;
    this.name = name;
    this.prefixes = prefixes;
  }

  String id() {
    return "/subscriptions/" + subscription + "/resourceGroups/" + rg + "/providers/Microsoft.Network/virtualNetworks/"
        + name;
  }
}
