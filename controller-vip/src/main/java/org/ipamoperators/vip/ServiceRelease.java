package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.StatusDetails;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.controller.common.ledger.ClaimIndex;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.vip.api.VipAnnotations;
import org.ipamoperators.vip.legacy.LegacyReservations;
import org.ipamoperators.vip.plan.Holding;
import org.ipamoperators.vip.plan.ServiceHoldings;
import org.ipamoperators.vip.plan.ServiceOwners;
import org.ipamoperators.vip.plan.ServiceRequest;
import org.ipamoperators.vip.plan.VipPlan;

/**
 * Gives back what a Service holds, in the safe order: an address leaves the Service's status before
 * its claim is deleted (or its membership of a shared claim removed), and only this Service's (this
 * uid's) claims are ever deleted. Also removes the finalizers older versions left on Services.
 */
final class ServiceRelease {
  private final KubernetesClient client;
  private final ClusterLedger ledger;
  private final ClaimIndex index;
  private final SharedClaims shared;
  private final ServiceStatusWriter status;

  ServiceRelease(KubernetesClient client, ClusterLedger ledger, ClaimIndex index, SharedClaims shared,
      ServiceStatusWriter status) {
    this.client = client;
    this.ledger = ledger;
    this.index = index;
    this.shared = shared;
    this.status = status;
  }

  static String memberName(Service s) {
    return s.getMetadata().getNamespace() + "/" + s.getMetadata().getName();
  }

  /** The Service is gone from the API, so nothing shows its addresses any more: all it holds goes. */
  void deleted(Service svc, ClaimOwner owner) {
    holdingsToRelease(svc, owner).forEach((ip, under) -> drop(Ip.parse(ip), under, owner, memberName(svc)));
  }

  /**
   * After a status write that left the Service showing {@code shown}: what the plan gives up and,
   * when the plan was claimed whole, the shared addresses it leaves; otherwise whatever it holds
   * that it does not show (claims of this pass it cannot publish, or left from an earlier one: held
   * and shown by nobody, so given back until it can have all). An address still shown stays held.
   */
  void afterPublish(Service svc, ClaimOwner owner, VipPlan plan, ServiceHoldings h, Set<String> shown, boolean complete) {
    for (Holding x : plan.toRelease()) {
      if (!shown.contains(x.ip().toString())) {
        drop(x.ip(), h.heldUnder().get(x.ip()), owner, memberName(svc));
      }
    }
    if (complete) {
      for (Ip ip : h.leaveAfter()) {
        if (!shown.contains(ip.toString())) {
          drop(ip, "shared", owner, memberName(svc));
        }
      }
      return;
    }
    claimed(svc, owner).forEach((ip, under) -> {
      if (!shown.contains(ip.toString())) {
        drop(ip, under, owner, memberName(svc));
      }
    });
  }

  /** Releases an address the Service holds: its own claim, or its membership of a shared one. */
  void drop(Ip ip, String heldUnder, ClaimOwner owner, String me) {
    if (heldUnder == null || heldUnder.isEmpty()) {
      release(ip, owner);
    } else {
      shared.leave(ip, me, owner.uid()); // this Service's entry only, not a successor's of the same name
    }
  }

  /** The addresses claimed for this Service, own or shared (from the index). */
  private Map<Ip, String> claimed(Service svc, ClaimOwner owner) {
    ServiceRequest req = new ServiceRequest(svc.getMetadata().getNamespace(), svc.getMetadata().getName(), null, null,
        null, null, List.of(), null);
    ServiceHoldings s = VipFacts.holdings(index, req, owner);
    Map<Ip, String> out = new HashMap<>(s.heldUnder());
    for (Ip ip : s.leaveAfter()) {
      out.put(ip, "shared");
    }
    return out;
  }

  /**
   * Deletes the claim on {@code ip} if, and only if, it is this Service's (name and uid), conditional
   * on the version of the claim read: a claim re-created (by anyone) meanwhile is never removed. The
   * index's copy is used when it shows the claim as the Service's (claims do not change), else the
   * API server's.
   */
  boolean release(Ip ip, ClaimOwner owner) {
    IPClaim c = index.get(ip).map(ClaimIndex.Entry::claim).orElse(null);
    for (int attempt = 0; attempt < 2; attempt++) {
      if (c == null || c.getSpec() == null || !ServiceOwners.same(owner, c.getSpec().owner())) {
        c = attempt == 0 ? ledger.get(ip).orElse(null) : null;
        if (c == null || !ServiceOwners.same(owner, c.getSpec().owner())) {
          return false;
        }
      }
      try {
        List<StatusDetails> deleted = client.resources(IPClaim.class)
            .withName(c.getMetadata().getName()).lockResourceVersion(c.getMetadata().getResourceVersion()).delete();
        index.deleted(c);
        return !deleted.isEmpty();
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          index.deleted(c);
          return false;
        }
        if (e.getCode() != 409) {
          throw e;
        }
        c = null; // changed since read: read it again
      }
    }
    return false;
  }

  /**
   * Everything the Service holds (from the index, and the addresses it shows whose claim the API
   * server says is its own or shared), by address: {@code ""} its own claim, else the sharing key.
   * The shown addresses cover an index that lags: a member missing from the index's copy of a shared
   * claim would otherwise stay a member until the sweep (leaving reads the claim from the API server
   * and removes this Service's entry only).
   */
  private Map<String, String> holdingsToRelease(Service svc, ClaimOwner owner) {
    Map<String, String> out = new HashMap<>();
    claimed(svc, owner).forEach((ip, under) -> out.put(ip.toString(), under));
    for (String s : VipServices.ingress(svc)) {
      if (out.containsKey(s)) {
        continue;
      }
      try {
        ledger.get(Ip.parse(s)).ifPresent(c -> {
          if (ServiceOwners.same(owner, c.getSpec().owner())) {
            out.put(s, "");
          } else if (SharedClaims.isShared(c.getSpec().owner())) {
            out.put(s, "shared");
          }
        });
      } catch (RuntimeException e) {
        // not an address of ours
      }
    }
    return out;
  }

  /**
   * No longer ours to serve (type or class changed): unpublish, then release (keeping what a legacy
   * VirtualIP still reserves), and drop an old finalizer. Returns what it released.
   *
   * <p>Unpublish, then release: the Service stops showing what it holds before any claim of it is
   * deleted, so no moment exists in which the address is free in the ledger while the Service still
   * announces it (another Service, or a second replica, could take it then).
   */
  Set<String> letGo(Service svc, ClaimOwner owner) {
    Set<String> keep = legacyReserved(svc, owner);
    Map<String, String> held = holdingsToRelease(svc, owner);
    held.keySet().removeAll(keep);
    List<String> ingress = VipServices.ingress(svc);
    if (ingress.stream().anyMatch(held::containsKey)) {
      status.write(svc, Ingress.without(ingress, held.keySet()), null);
    }
    held.forEach((ip, under) -> drop(Ip.parse(ip), under, owner, memberName(svc)));
    dropOldFinalizers(svc);
    return held.keySet();
  }

  /** Own claims adopted from a legacy VirtualIP that still stands for this Service: kept until it is migrated. */
  private Set<String> legacyReserved(Service svc, ClaimOwner owner) {
    List<String> adopted = claimed(svc, owner).keySet().stream()
        .filter(ip -> index.get(ip).map(e -> LegacyReservations.isAdoptedFromVirtualIp(e.claim())).orElse(false))
        .map(Ip::toString).toList();
    return LegacyReservations.reserved(client, svc, adopted);
  }

  /**
   * Finalizers nobody removes any more: ours from earlier versions (this one adds none), and the old
   * operator's. Removed once (one PATCH, only on Services that carry one), so that upgraded
   * clusters keep their Services deletable.
   */
  void dropOldFinalizers(Service svc) {
    List<String> f = svc.getMetadata().getFinalizers();
    if (f == null || !(f.contains(VipAnnotations.FINALIZER) || f.contains(VipAnnotations.LEGACY_FINALIZER))) {
      return;
    }
    try {
      client.services().inNamespace(svc.getMetadata().getNamespace()).withName(svc.getMetadata().getName())
          .edit(s -> {
            if (s.getMetadata().getFinalizers() != null) {
              s.getMetadata().getFinalizers().removeAll(List.of(VipAnnotations.FINALIZER, VipAnnotations.LEGACY_FINALIZER));
            }
            return s;
          });
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }
}
