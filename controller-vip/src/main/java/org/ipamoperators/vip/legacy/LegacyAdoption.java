package org.ipamoperators.vip.legacy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClaimResult;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.pool.Pool;
import org.ipamoperators.vip.ServiceVipReconciler;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.VipAnnotations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Run once at start, before any Service is reconciled: every {@code IP} object of the old operator
 * becomes a claim in the ledger for the same address and the same Service, so no Service changes
 * address and no address is handed out twice. An address of a legacy VirtualIP is claimed for the
 * Service the VirtualIP exposes (its clone keeps announcing it until the VirtualIP is migrated).
 * The IP objects themselves are left in place (a rollback to the old operator still finds them);
 * they can be deleted once the migration is done. Services the old operator was deleting lose its
 * finalizer, which nobody else would ever remove.
 */
public final class LegacyAdoption {
  private static final Logger LOG = LoggerFactory.getLogger(LegacyAdoption.class);
  /** Label on claims made from the old operator's IP objects. */
  public static final String LABEL_ADOPTED = "ipam.ipamoperators.org/adopted-from";

  /** What happened: addresses adopted, and those left out with why. */
  public record Result(List<String> adopted, List<String> skipped) {}

  private LegacyAdoption() {}

  public static Result adopt(KubernetesClient client) {
    List<String> adopted = new ArrayList<>();
    List<String> skipped = new ArrayList<>();
    releaseStuckServices(client);
    Optional<List<GenericKubernetesResource>> ips = list(client, LegacyKinds.IP, true);
    if (ips.isEmpty()) {
      return new Result(adopted, skipped);
    }
    Adoption adoption = new Adoption(client, virtualIps(client), client.resources(IPGroup.class).list().getItems(),
        new ClusterLedger(client), new EventRecorder(client, "vip-controller"), adopted, skipped);
    ips.get().forEach(adoption::adopt);
    LOG.info("Adopted {} IP object(s) of the old operator; left out: {}", adopted.size(), skipped);
    return new Result(adopted, skipped);
  }

  /** The old operator's VirtualIPs not migrated yet, by address. */
  private static Map<Ip, GenericKubernetesResource> virtualIps(KubernetesClient client) {
    Map<Ip, GenericKubernetesResource> virtualIps = new HashMap<>();
    for (GenericKubernetesResource v : list(client, LegacyKinds.VIRTUAL_IP, true).orElse(List.of())) {
      String ip = LegacyFields.status(v, "ip");
      if (ip != null && !LegacyKinds.MIGRATED.equals(LegacyFields.status(v, "state"))) {
        try {
          virtualIps.put(Ip.parse(ip), v);
        } catch (RuntimeException e) {
          // not an address: nothing to adopt for it
        }
      }
    }
    return virtualIps;
  }

  /** One adoption run: what it reads once, and what it adopted and left out so far. */
  private record Adoption(KubernetesClient client, Map<Ip, GenericKubernetesResource> virtualIps, List<IPGroup> groups,
      ClusterLedger ledger, EventRecorder events, List<String> adopted, List<String> skipped) {

    /** Claims an old IP object's address for the Service it served, or says why not. */
    void adopt(GenericKubernetesResource o) {
      String name = o.getMetadata().getName();
      Ip ip;
      try {
        ip = Ip.parse(name);
      } catch (RuntimeException e) {
        skipped.add(name + ": not an address");
        return;
      }
      Map<String, String> labels = o.getMetadata().getLabels() == null ? Map.of() : o.getMetadata().getLabels();
      GenericKubernetesResource vip = virtualIps.get(ip);
      String namespace;
      String service;
      if (vip != null) {
        namespace = vip.getMetadata().getNamespace();
        service = LegacyFields.spec(vip, "service");
      } else {
        String owner = o.getMetadata().getAnnotations() == null ? null
            : o.getMetadata().getAnnotations().get(LegacyKinds.OWNER_ANNOTATION);
        int slash = owner == null ? -1 : owner.indexOf('/');
        if (slash <= 0) {
          skipped.add(name + ": no owner annotation " + LegacyKinds.OWNER_ANNOTATION);
          return;
        }
        namespace = owner.substring(0, slash);
        service = owner.substring(slash + 1);
      }
      Service svc = service == null ? null : client.services().inNamespace(namespace).withName(service).get();
      if (vip == null && (svc == null || svc.getMetadata().getDeletionTimestamp() != null)) {
        // The old operator leaked these (no owner reference): the address is free again.
        skipped.add(name + ": Service " + namespace + "/" + service + " is gone");
        return;
      }
      ClaimOwner owner = svc != null ? ServiceVipReconciler.owner(svc)
          : new ClaimOwner(ServiceVipReconciler.CONTROLLER, "Service", namespace, service, null);
      ClaimResult r = ledger.claim(ip, pool(ip, labels, groups), owner,
          Map.of(LABEL_ADOPTED, vip != null ? LegacyReservations.VIRTUAL_IP : "ip"));
      if (r.ours()) {
        adopted.add(name);
        return;
      }
      String why = name + ": already held by " + r.holder().describe();
      skipped.add(why);
      if (svc != null) {
        events.warning(svc, "LegacyClaimConflict", "the old operator's IP object " + why
            + "; this Service will be given another address");
      }
    }
  }

  /** The ledger pool: the IPGroup of the label, else the first IPGroup containing the address. */
  static String pool(Ip ip, Map<String, String> labels, List<IPGroup> groups) {
    String g = labels.get(LegacyKinds.LABEL_IPGROUP);
    if (g != null && !g.isBlank()) {
      return "ipgroup/" + g;
    }
    Optional<String> containing = containing(ip, groups);
    if (containing.isPresent()) {
      return "ipgroup/" + containing.get();
    }
    String gsm = labels.get(LegacyKinds.LABEL_GSM);
    return "legacy/" + (gsm == null ? "unknown" : gsm);
  }

  static Optional<String> containing(Ip ip, List<IPGroup> groups) {
    return groups.stream().filter(x -> x.getSpec() != null).sorted(java.util.Comparator.comparing(x -> x.getMetadata().getName()))
        .filter(x -> {
          try {
            return Pool.of(x.getMetadata().getName(), x.getSpec().ranges(), List.of()).contains(ip);
          } catch (RuntimeException e) {
            return false;
          }
        }).map(x -> x.getMetadata().getName()).findFirst();
  }

  /** Lists a legacy kind; empty when it is not installed (or, when asked, not readable). */
  static Optional<List<GenericKubernetesResource>> list(KubernetesClient client,
      io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext kind, boolean anyNamespace) {
    try {
      var op = client.genericKubernetesResources(kind);
      return Optional.of(kind.isNamespaceScoped() && anyNamespace ? op.inAnyNamespace().list().getItems()
          : op.list().getItems());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404 || e.getCode() == 403) {
        LOG.info("No {} objects of the old operator to migrate ({})", kind.getKind(), e.getCode());
        return Optional.empty();
      }
      throw e;
    }
  }

  /** LoadBalancer Services being deleted with only the old operator's finalizer left would wait forever. */
  private static void releaseStuckServices(KubernetesClient client) {
    for (Service s : client.services().inAnyNamespace().list().getItems()) {
      List<String> f = s.getMetadata().getFinalizers();
      if (s.getMetadata().getDeletionTimestamp() != null && f != null && f.contains(VipAnnotations.LEGACY_FINALIZER)
          && !f.contains(VipAnnotations.FINALIZER)) {
        try {
          client.services().inNamespace(s.getMetadata().getNamespace()).withName(s.getMetadata().getName()).edit(x -> {
            x.getMetadata().getFinalizers().remove(VipAnnotations.LEGACY_FINALIZER);
            return x;
          });
        } catch (KubernetesClientException e) {
          if (e.getCode() != 404) {
            throw e;
          }
        }
      }
    }
  }
}
