package org.ipamoperators.egressip.network;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;

/**
 * Writes an EgressIPAM's decisions to OpenShift SDN: {@code NetNamespace.egressIPs} per namespace and
 * {@code HostSubnet.egressIPs} (explicit mode) or {@code egressCIDRs} (CIDR mode) per node. Only
 * entries inside the IPAM's CIDRs are touched, only objects that change are written, and each
 * object's failure is reported without stopping the others.
 */
public final class SdnWriter {
  private final KubernetesClient client;

  public SdnWriter(KubernetesClient client) {
    this.client = client;
  }

  /** Applies the write; returns one message per object that could not be written. */
  public List<String> apply(NetworkWrite w) {
    List<String> failures = new ArrayList<>();
    w.namespaces().forEach((ns, ips) -> setNetNamespace(ns, ips.stream().map(Ip::toString).toList(), w, failures));
    w.cleared().forEach(ns -> setNetNamespace(ns, List.of(), w, failures));
    for (HostSubnet hs : client.resources(HostSubnet.class).list().getItems()) {
      String node = hs.getMetadata().getName();
      List<String> ips = keepForeign(hs.getEgressIPs(), w);
      List<String> cidrs = keepForeign(hs.getEgressCIDRs(), w);
      Set<Ip> hosted = w.hosting().get(node);
      if (hosted != null) {
        hosted.stream().sorted().map(Ip::toString).forEach(ips::add);
      }
      IpRange cidr = w.cidrMode().get(node);
      if (cidr != null) {
        cidrs.add(cidr.text());
      }
      if (!sameSet(ips, hs.getEgressIPs()) || !sameSet(cidrs, hs.getEgressCIDRs())) {
        try {
          client.resources(HostSubnet.class).withName(node).edit(h -> {
            h.setEgressIPs(ips);
            h.setEgressCIDRs(cidrs);
            return h;
          });
        } catch (KubernetesClientException e) {
          failures.add("HostSubnet " + node + ": " + e.getMessage());
        }
      }
    }
    return failures;
  }

  private void setNetNamespace(String ns, List<String> ours, NetworkWrite w, List<String> failures) {
    NetNamespace current = client.resources(NetNamespace.class).withName(ns).get();
    if (current == null) {
      if (!ours.isEmpty()) {
        failures.add("NetNamespace " + ns + " does not exist yet (OpenShift SDN creates it)");
      }
      return;
    }
    List<String> desired = new ArrayList<>(ours);
    for (String ip : current.getEgressIPs() == null ? List.<String>of() : current.getEgressIPs()) {
      if (!w.ours(ip) && !desired.contains(ip)) {
        desired.add(ip); // set by someone else: not ours to remove
      }
    }
    if (Objects.equals(desired, current.getEgressIPs() == null ? List.of() : current.getEgressIPs())) {
      return;
    }
    try {
      client.resources(NetNamespace.class).withName(ns).edit(n -> {
        n.setEgressIPs(desired);
        return n;
      });
    } catch (KubernetesClientException e) {
      failures.add("NetNamespace " + ns + ": " + e.getMessage());
    }
  }

  private static List<String> keepForeign(List<String> values, NetworkWrite w) {
    List<String> out = new ArrayList<>();
    if (values != null) {
      for (String v : values) {
        String address = v.contains("/") ? v.substring(0, v.indexOf('/')) : v;
        if (!w.ours(address)) {
          out.add(v);
        }
      }
    }
    return out;
  }

  private static boolean sameSet(List<String> a, List<String> b) {
    return new TreeSet<>(a).equals(new TreeSet<>(b == null ? List.of() : b));
  }

  /** The egress IPs each HostSubnet hosts today, as the planner's starting point. */
  public Map<String, Set<Ip>> hosting() {
    Map<String, Set<Ip>> out = new java.util.HashMap<>();
    for (HostSubnet hs : client.resources(HostSubnet.class).list().getItems()) {
      Set<Ip> ips = new TreeSet<>();
      if (hs.getEgressIPs() != null) {
        for (String s : hs.getEgressIPs()) {
          try {
            ips.add(Ip.parse(s));
          } catch (IllegalArgumentException e) {
            // not an address: not ours, left alone
          }
        }
      }
      out.put(hs.getMetadata().getName(), ips);
    }
    return out;
  }

  /** Each node's SDN host address, never to be handed out. */
  public Map<String, Ip> hostIps() {
    Map<String, Ip> out = new java.util.HashMap<>();
    for (HostSubnet hs : client.resources(HostSubnet.class).list().getItems()) {
      try {
        if (hs.getHostIP() != null) {
          out.put(hs.getMetadata().getName(), Ip.parse(hs.getHostIP()));
        }
      } catch (IllegalArgumentException e) {
        // ignore a malformed hostIP: it cannot collide with a parsed address either
      }
    }
    return out;
  }
}
