package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.LoadBalancerIngressBuilder;
import io.fabric8.kubernetes.api.model.LoadBalancerStatus;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClaimResult;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.VipAnnotations;
import org.ipamoperators.vip.plan.GroupInfo;
import org.ipamoperators.vip.plan.Holding;
import org.ipamoperators.vip.plan.ServiceRequest;
import org.ipamoperators.vip.plan.VipPlan;
import org.ipamoperators.vip.plan.VipPlanner;
import org.ipamoperators.vip.plan.VipProblem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives LoadBalancer Services their addresses from IPGroups. The ledger's claims are the truth: an
 * address is claimed (one IPClaim per address, created on the API server) before it is written to
 * {@code status.loadBalancer.ingress}, a Service keeps what it holds for as long as it exists, and
 * its claims are released when it is deleted, stops being a LoadBalancer or changes class. Problems
 * become Warning Events on the Service, which stays pending; other Services are not held up.
 */
@ControllerConfiguration(name = "vip-services", finalizerName = VipAnnotations.FINALIZER,
    generationAwareEventProcessing = false,
    informer = @Informer(genericFilter = VipServiceFilter.class),
    maxReconciliationInterval = @MaxReconciliationInterval(interval = 5, timeUnit = TimeUnit.MINUTES))
public class ServiceVipReconciler implements Reconciler<Service>, Cleaner<Service> {
  static final String CONTROLLER = "vip";
  private static final Logger LOG = LoggerFactory.getLogger(ServiceVipReconciler.class);
  private static final Duration RETRY_PENDING = Duration.ofSeconds(30);
  private static final int ATTEMPTS = 20;

  private final KubernetesClient client;
  private final ClusterLedger ledger;
  private final EventRecorder events;
  /**
   * Claims this process made that the informer may not show yet: a reconcile right after a claim
   * must neither claim a second address for the same Service nor hand the address to another.
   */
  private final Map<Ip, Holder> recent = new ConcurrentHashMap<>();
  /** Choosing and claiming fresh addresses is serialized, so one replica never races itself. */
  private final Object allocation = new Object();
  private InformerEventSource<IPGroup, Service> groups;
  private InformerEventSource<IPClaim, Service> claims;

  /** A claim made at some time; forgotten after {@link #RECENT}, when the informer has long caught up. */
  private record Holder(String pool, ClaimOwner owner, long at) {
    boolean stale() {
      return System.nanoTime() - at > RECENT.toNanos();
    }
  }

  private static final Duration RECENT = Duration.ofSeconds(60);

  public ServiceVipReconciler(KubernetesClient client) {
    this.client = client;
    this.ledger = new ClusterLedger(client);
    this.events = new EventRecorder(client, "vip-controller");
  }

  static ClaimOwner owner(Service s) {
    return new ClaimOwner(CONTROLLER, "Service", s.getMetadata().getNamespace(), s.getMetadata().getName(),
        s.getMetadata().getUid());
  }

  @Override
  public List<EventSource<?, Service>> prepareEventSources(EventSourceContext<Service> context) {
    // A new or changed pool may serve the Services still waiting.
    groups = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPGroup.class, Service.class)
        .withSecondaryToPrimaryMapper(g -> pending(context)).build(), context);
    // A released address may serve the Services still waiting; a claim deleted by hand is noticed
    // by its owner. Creations are our own doing and need no reconcile.
    claims = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPClaim.class, Service.class)
        .withOnAddFilter(c -> false)
        .withOnUpdateFilter((n, o) -> false)
        .withSecondaryToPrimaryMapper(c -> {
          Set<ResourceID> ids = new HashSet<>(pending(context));
          ClaimOwner o = c.getSpec() == null ? null : c.getSpec().owner();
          if (o != null && CONTROLLER.equals(o.controller()) && "Service".equals(o.kind())) {
            ids.add(new ResourceID(o.name(), o.namespace()));
          }
          return ids;
        }).build(), context);
    return List.of(groups, claims);
  }

  private static Set<ResourceID> pending(EventSourceContext<Service> context) {
    return context.getPrimaryCache().list(s -> VipServices.handles(s) && VipServices.ingress(s).isEmpty()
        && s.getMetadata().getDeletionTimestamp() == null).map(ResourceID::fromResource).collect(Collectors.toSet());
  }

  @Override
  public UpdateControl<Service> reconcile(Service svc, Context<Service> context) {
    ClaimOwner owner = owner(svc);
    if (!VipServices.handles(svc)) {
      letGo(svc, owner);
      return UpdateControl.noUpdate();
    }
    List<GroupInfo> groupInfos = groups.list(g -> g.getSpec() != null && g.getMetadata().getDeletionTimestamp() == null)
        .map(g -> new GroupInfo(g.getMetadata().getName(), g.getSpec())).toList();
    ServiceRequest request = new ServiceRequest(svc.getMetadata().getNamespace(), svc.getMetadata().getName(),
        svc.getMetadata().getLabels(), namespaceLabels(svc, groupInfos),
        VipServices.annotations(svc).get(VipAnnotations.IP_GROUP), VipServices.requested(svc),
        VipServices.families(svc), VipServices.optionalFamilies(svc), VipServices.ingress(svc));

    List<VipProblem> extra = new ArrayList<>();
    VipPlan plan = plan(request, groupInfos, owner, Map.of());
    if (!plan.toClaim().isEmpty()) {
      synchronized (allocation) {
        plan = claimAll(request, groupInfos, owner, extra);
      }
    }
    for (Holding h : plan.toRelease()) {
      release(h.ip(), owner);
    }
    List<VipProblem> problems = new ArrayList<>(plan.problems());
    problems.addAll(extra);
    if (plan.complete() && extra.isEmpty()) {
      writeIngress(svc, plan.ingress().stream().map(Ip::toString).toList());
    }
    for (VipProblem p : problems) {
      events.warning(svc, p.reason().name(), p.message());
    }
    boolean waiting = problems.stream().anyMatch(p -> p.reason() != VipProblem.Reason.AddressKept);
    return waiting ? UpdateControl.<Service>noUpdate().rescheduleAfter(RETRY_PENDING) : UpdateControl.noUpdate();
  }

  /** Plans and claims until every claim succeeds, re-planning around addresses others took first. */
  private VipPlan claimAll(ServiceRequest request, List<GroupInfo> groupInfos, ClaimOwner owner, List<VipProblem> extra) {
    Map<Ip, String> lost = new HashMap<>();
    VipPlan plan = plan(request, groupInfos, owner, lost);
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      boolean again = false;
      for (Holding h : plan.toClaim()) {
        ClaimResult r = ledger.claim(h.ip(), h.pool(), owner);
        if (r.ours()) {
          recent.put(h.ip(), new Holder(h.pool(), owner, System.nanoTime()));
          continue;
        }
        String holder = r.holder().describe();
        if (request.requested().stream().anyMatch(x -> x.trim().equals(h.ip().toString()))) {
          extra.add(new VipProblem(VipProblem.Reason.AddressUnavailable, "requested " + h.ip() + " is held by " + holder));
        } else {
          lost.put(h.ip(), holder);
          again = true;
        }
      }
      VipPlan next = plan(request, groupInfos, owner, lost);
      if (!again) {
        return next;
      }
      plan = next;
    }
    return plan;
  }

  private VipPlan plan(ServiceRequest request, List<GroupInfo> groupInfos, ClaimOwner owner, Map<Ip, String> lost) {
    List<Holding> held = new ArrayList<>();
    Map<Ip, String> taken = new HashMap<>(lost);
    Set<Ip> seen = new HashSet<>();
    for (IPClaim c : claims.list(c -> c.getSpec() != null).toList()) {
      Ip ip;
      try {
        ip = Ip.parse(c.getSpec().address());
      } catch (RuntimeException e) {
        continue;
      }
      seen.add(ip);
      Holder r = recent.get(ip);
      if (r != null && r.owner().sameAs(c.getSpec().owner())) {
        recent.remove(ip); // the informer has caught up
      }
      if (owner.sameAs(c.getSpec().owner())) {
        held.add(new Holding(ip, c.getSpec().pool()));
      } else {
        taken.put(ip, c.getSpec().owner().describe());
      }
    }
    recent.entrySet().removeIf(e -> e.getValue().stale());
    recent.forEach((ip, h) -> {
      if (seen.contains(ip)) {
        return;
      }
      if (owner.sameAs(h.owner())) {
        held.add(new Holding(ip, h.pool()));
      } else {
        taken.put(ip, h.owner().describe());
      }
    });
    return VipPlanner.plan(request, groupInfos, held, taken);
  }

  private Map<String, String> namespaceLabels(Service svc, List<GroupInfo> groupInfos) {
    if (groupInfos.stream().noneMatch(g -> g.spec().namespaceSelector() != null)) {
      return Map.of();
    }
    Namespace ns = client.namespaces().withName(svc.getMetadata().getNamespace()).get();
    return ns == null || ns.getMetadata().getLabels() == null ? Map.of() : ns.getMetadata().getLabels();
  }

  /** The addresses claimed for this owner: the informer's claims and those it may not show yet. */
  private Set<Ip> claimed(ClaimOwner owner) {
    Set<Ip> out = new HashSet<>();
    claims.list(c -> c.getSpec() != null && owner.sameAs(c.getSpec().owner()))
        .forEach(c -> out.add(Ip.parse(c.getSpec().address())));
    recent.forEach((ip, h) -> {
      if (owner.sameAs(h.owner())) {
        out.add(ip);
      }
    });
    return out;
  }

  /** What to release for this Service: its claims and the addresses its status shows (released only if its own). */
  private Set<Ip> holdings(Service svc, ClaimOwner owner) {
    Set<Ip> out = claimed(owner);
    for (String s : VipServices.ingress(svc)) {
      try {
        out.add(Ip.parse(s));
      } catch (RuntimeException e) {
        // not an address of ours
      }
    }
    return out;
  }

  private boolean release(Ip ip, ClaimOwner owner) {
    boolean released = ledger.release(ip, owner); // only if this owner holds it
    Holder h = recent.get(ip);
    if (h != null && h.owner().sameAs(owner)) {
      recent.remove(ip);
    }
    return released;
  }

  /** No longer ours to serve (type or class changed): release, clear our ingress, drop the finalizer. */
  private void letGo(Service svc, ClaimOwner owner) {
    Set<Ip> ours = claimed(owner);
    Set<String> released = new HashSet<>();
    for (Ip ip : holdings(svc, owner)) {
      if (release(ip, owner) || ours.contains(ip)) {
        released.add(ip.toString());
      }
    }
    List<String> ingress = VipServices.ingress(svc);
    // Only an ingress made of addresses this Service held is ours to clear.
    if (!ingress.isEmpty() && released.containsAll(ingress)) {
      writeIngress(svc, List.of());
    }
    if (VipServices.hasFinalizer(svc)) {
      try {
        client.services().inNamespace(svc.getMetadata().getNamespace()).withName(svc.getMetadata().getName())
            .edit(s -> {
              s.getMetadata().getFinalizers().remove(VipAnnotations.FINALIZER);
              return s;
            });
      } catch (KubernetesClientException e) {
        if (e.getCode() != 404) {
          throw e;
        }
      }
    }
    LOG.info("Service {}/{} is no longer served: released {}", svc.getMetadata().getNamespace(),
        svc.getMetadata().getName(), released);
  }

  private void writeIngress(Service svc, List<String> ips) {
    if (VipServices.ingress(svc).equals(ips)) {
      return;
    }
    List<LoadBalancerIngress> ingress = ips.stream().map(ip -> new LoadBalancerIngressBuilder().withIp(ip).build()).toList();
    client.services().inNamespace(svc.getMetadata().getNamespace()).withName(svc.getMetadata().getName())
        .editStatus(s -> {
          if (s.getStatus() == null) {
            s.setStatus(new ServiceStatus());
          }
          s.getStatus().setLoadBalancer(new LoadBalancerStatus(ingress.isEmpty() ? null : ingress));
          return s;
        });
  }

  /** Deletion: release every claim of the Service; a claim already gone is fine. */
  @Override
  public DeleteControl cleanup(Service svc, Context<Service> context) {
    ClaimOwner owner = owner(svc);
    for (Ip ip : holdings(svc, owner)) {
      release(ip, owner);
    }
    return DeleteControl.defaultDelete();
  }
}
