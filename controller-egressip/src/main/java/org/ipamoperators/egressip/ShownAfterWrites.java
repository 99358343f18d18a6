package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.network.NetworkType;
import org.ipamoperators.egressip.plan.EgressWrites;

/**
 * Where an address is still shown once a pass's (or a deletion's) writes were applied: the holder's annotation
 * (unless it is the user's own, kept at deletion), any NetNamespace, HostSubnet or EgressIP of this IPAM, a
 * node's interface whose detach did not go through. Read from the informers' views with our own writes over
 * them, so a write that failed leaves the address shown.
 */
final class ShownAfterWrites {
  private final EgressViews views;
  private final Map<Ip, HeldAddress> held;
  private final boolean deleting;
  private final Interfaces interfaces;
  private final String ipam;
  private final NetworkType network;
  // What the HostSubnets and EgressIPs show, read on the first question only (most passes release nothing).
  private Map<Ip, String> onHostSubnets;
  private Map<Ip, String> onEgressIps;

  /**
   * What the cloud showed and did in this pass.
   *
   * @param attached the held addresses some node's interface showed before the pass's cloud step
   * @param unknown an interface could not be read for a reason that may pass: any address may be on it
   * @param detached the addresses whose detach the cloud confirmed in this pass
   */
  record Interfaces(Set<Ip> attached, boolean unknown, Set<Ip> detached) {
    static final Interfaces NONE = new Interfaces(Set.of(), false, Set.of());
  }

  /**
   * @param held the addresses this IPAM holds, with their holders
   * @param deleting the IPAM is being deleted: a user's own (manual) annotation stays and does not count
   */
  ShownAfterWrites(EgressViews views, String ipam, NetworkType network, Map<Ip, HeldAddress> held, boolean deleting,
      Interfaces interfaces) {
    this.views = views;
    this.held = held;
    this.deleting = deleting;
    this.interfaces = interfaces;
    this.ipam = ipam;
    this.network = network;
  }

  private void readNetwork() {
    onHostSubnets = new HashMap<>();
    onEgressIps = new HashMap<>();
    if (network == NetworkType.OPENSHIFT_SDN) {
      for (HostSubnet h : views.hostSubnetView()) {
        views.parsedSubnet(h).hosting().forEach(ip -> onHostSubnets.put(ip, h.getMetadata().getName()));
      }
    } else if (network == NetworkType.OVN_KUBERNETES) {
      for (GenericKubernetesResource e : views.egressIpView().mine(ipam)) {
        EgressFacts.egressIpAddresses(e).forEach(ip -> onEgressIps.put(ip, e.getMetadata().getName()));
      }
    }
  }

  /** Where the address is still shown; empty when nowhere. */
  Optional<EgressWrites.Sighting> find(Ip ip) {
    if (onHostSubnets == null) {
      readNetwork();
    }
    HeldAddress h = held.get(ip);
    String ns = h == null ? null : h.namespace();
    Namespace n = ns == null ? null : views.namespace(ns);
    if (n != null && !(deleting && h.manual()) && EgressFacts.annotatedAddresses(n).contains(ip)) {
      return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.ANNOTATION, ns));
    }
    NetNamespace own = ns == null ? null : views.netNamespace(ns);
    if (own != null && own.getEgressIPs() != null && own.getEgressIPs().contains(ip.toString())) {
      return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.NET_NAMESPACE, ns));
    }
    Optional<String> other = views.netNamespacesShowing(Set.of(ip)).keySet().stream().findFirst();
    if (other.isPresent()) {
      return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.NET_NAMESPACE, other.get()));
    }
    if (onHostSubnets.containsKey(ip)) {
      return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.HOST_SUBNET, onHostSubnets.get(ip)));
    }
    if (onEgressIps.containsKey(ip)) {
      return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.EGRESS_IP, onEgressIps.get(ip)));
    }
    if (interfaces.unknown() || interfaces.attached().contains(ip) && !interfaces.detached().contains(ip)) {
      return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.INTERFACE,
          interfaces.unknown() ? "(not readable now)" : "(detach not confirmed)"));
    }
    return Optional.empty();
  }
}

