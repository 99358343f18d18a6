package org.ipamoperators.vip.legacy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;

/**
 * Addresses the ledger keeps for a Service that is not a LoadBalancer (yet) because a legacy
 * {@code VirtualIP} still stands for it: the old operator announced the address through a keepalived
 * clone of the Service, and the VirtualIP's migration turns the Service itself into the LoadBalancer
 * holding it. Until the VirtualIP is migrated or deleted (its retirement releases the address), the
 * Service controller must not take a non-LoadBalancer Service's claim on it for one it no longer serves.
 */
public final class LegacyReservations {
  /** The value of {@link LegacyAdoption#LABEL_ADOPTED} on claims made for a VirtualIP. */
  public static final String VIRTUAL_IP = "virtualip";

  private LegacyReservations() {}

  /**
   * Of {@code addresses} (claims of the Service labelled as adopted from a VirtualIP), those a
   * VirtualIP in the Service's namespace still reserves; empty when the VirtualIP kind is not installed.
   */
  public static Set<String> reserved(KubernetesClient client, Service svc, Collection<String> addresses) {
    if (addresses.isEmpty()) {
      return Set.of();
    }
    List<GenericKubernetesResource> virtualIps;
    try {
      virtualIps = client.genericKubernetesResources(LegacyKinds.VIRTUAL_IP)
          .inNamespace(svc.getMetadata().getNamespace()).list().getItems();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404 || e.getCode() == 403) {
        return Set.of(); // no VirtualIPs here (or not ours to read): nothing is reserved
      }
      throw e;
    }
    return reserved(virtualIps, svc.getMetadata().getName(), addresses);
  }

  /** The decision: a VirtualIP not being deleted, not migrated, for this Service, showing the address. */
  static Set<String> reserved(List<GenericKubernetesResource> virtualIps, String service, Collection<String> addresses) {
    return virtualIps.stream()
        .filter(v -> v.getMetadata().getDeletionTimestamp() == null)
        .filter(v -> !LegacyKinds.MIGRATED.equals(LegacyFields.status(v, "state")))
        .filter(v -> service.equals(serviceOf(v)))
        .map(v -> canonical(LegacyFields.status(v, "ip")))
        .filter(ip -> ip != null && addresses.contains(ip))
        .collect(Collectors.toUnmodifiableSet());
  }

  /** Whether the claim was made for a legacy VirtualIP (at adoption or by its migration). */
  public static boolean isAdoptedFromVirtualIp(IPClaim c) {
    Map<String, String> labels = c == null ? null : c.getMetadata().getLabels();
    return labels != null && VIRTUAL_IP.equals(labels.get(LegacyAdoption.LABEL_ADOPTED));
  }

  private static String canonical(String ip) {
    try {
      return ip == null ? null : Ip.parse(ip).toString();
    } catch (IllegalArgumentException e) {
      return null; // not an address: reserves nothing
    }
  }

  private static String serviceOf(GenericKubernetesResource v) {
    String s = LegacyFields.status(v, "service");
    return s != null ? s : LegacyFields.spec(v, "service");
  }
}
