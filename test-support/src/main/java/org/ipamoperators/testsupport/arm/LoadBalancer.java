package org.ipamoperators.testsupport.arm;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** A load balancer: backend pools (by lower-case name), those an outbound rule uses, private frontends. */
final class LoadBalancer {
  final String subscription;
  final String rg;
  final String name;
  final Map<String, String> pools = new LinkedHashMap<>();
  final Set<String> outbound = new HashSet<>();
  final List<Frontend> frontends = new ArrayList<>();

  /** A frontend holding a private address of a subnet. */
  record Frontend(String name, String subnetId, String ip) {}

  LoadBalancer(String subscription, String rg, String name) {
    this.subscription = subscription;
    this.rg = rg;
    this.name = name;
  }

  String id() {
    return "/subscriptions/" + subscription + "/resourceGroups/" + rg + "/providers/Microsoft.Network/loadBalancers/"
        + name;
  }
}
