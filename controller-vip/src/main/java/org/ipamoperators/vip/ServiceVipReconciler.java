package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Service;
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
import org.ipamoperators.vip.plan.ShareMember;
import org.ipamoperators.vip.plan.SharedAddress;
import org.ipamoperators.vip.plan.VipPlan;
import org.ipamoperators.vip.plan.VipPlanner;
import org.ipamoperators.vip.plan.VipProblem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives LoadBalancer Services their addresses from IPGroups. The ledger's claims are the truth: an
 * address is claimed (one IPClaim per address, created on the API server) before it is written to
 * {@code status.loadBalancer.ingress}, a Service keeps what it holds for as long as it exists, and
 * its claims are released when it is deleted, stops being a LoadBalancer or changes class. Services
 * with the same sharing key share an address (see {@link SharedClaims}). A changed request is the
 * user asking for another address: the new one is claimed, published, and only then the old one
 * released. Problems become a condition and Warning Events on the Service, which stays pending;
 * other Services are not held up.
 */
@ControllerConfiguration(name = "vip-services", finalizerName = VipAnnotations.FINALIZER,
    generationAwareEventProcessing = false,
    informer = @Informer(genericFilter = VipServiceFilter.class),
    maxReconciliationInterval = @MaxReconciliationInterval(interval = 5, timeUnit = TimeUnit.MINUTES))
public class ServiceVipReconciler implements Reconciler<Service>, Cleaner<Service> {
  public static final String CONTROLLER = "vip";
  private static final Logger LOG = LoggerFactory.getLogger(ServiceVipReconciler.class);
  private static final Duration RETRY_PENDING = Duration.ofSeconds(30);
  private static final int ATTEMPTS = 20;

  private final KubernetesClient client;
  private final ClusterLedger ledger;
  private final SharedClaims shared;
  private final EventRecorder events;
  private final VipMetrics metrics;
  private final ServiceStatusWriter status;
  /**
   * Claims this process made that the informer may not show yet: a reconcile right after a claim
   * must neither claim a second address for the same Service nor hand the address to another.
   */
  private final Map<Ip, Holder> recent = new ConcurrentHashMap<>();
  /** Choosing (and reserving) fresh addresses is serialized, so one replica never races itself. */
  private final Object allocation = new Object();
  private InformerEventSource<IPGroup, Service> groups;
  private InformerEventSource<IPClaim, Service> claims;

  /**
   * A claim made at some time (with the sharing members this process knows of); forgotten after
   * {@link #RECENT}, when the informer has long caught up.
   */
  private record Holder(String pool, ClaimOwner owner, List<ShareMember> members, long at) {
    boolean stale() {
      return System.nanoTime() - at > RECENT.toNanos();
    }
  }

  private static final Duration RECENT = Duration.ofSeconds(60);

  public ServiceVipReconciler(KubernetesClient client) {
    this(client, new VipMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
  }

  ServiceVipReconciler(KubernetesClient client, VipMetrics metrics) {
    this.client = client;
    this.ledger = new ClusterLedger(client);
    this.shared = new SharedClaims(client);
    this.events = new EventRecorder(client, "vip-controller");
    this.metrics = metrics;
    this.status = new ServiceStatusWriter(client);
  }

  public static ClaimOwner owner(Service s) {
    return new ClaimOwner(CONTROLLER, "Service", s.getMetadata().getNamespace(), s.getMetadata().getName(),
        s.getMetadata().getUid());
  }

  private static String memberName(Service s) {
    return s.getMetadata().getNamespace() + "/" + s.getMetadata().getName();
  }

  @Override
  public List<EventSource<?, Service>> prepareEventSources(EventSourceContext<Service> context) {
    // A new or changed pool may serve the Services still waiting, and may no longer offer what
    // some Services hold (they report it). Status updates of a pool change nothing here.
    groups = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPGroup.class, Service.class)
        .withOnUpdateFilter((n, o) -> !java.util.Objects.equals(n.getSpec(), o.getSpec()))
        .withSecondaryToPrimaryMapper(g -> {
          Set<ResourceID> ids = new HashSet<>(pending(context));
          String pool = VipPlanner.pool(g.getMetadata().getName());
          if (claims != null) {
            claims.list(c -> c.getSpec() != null && pool.equals(c.getSpec().pool())).forEach(c -> ids.addAll(holders(c)));
          }
          return ids;
        }).build(), context);
    // A released address (or a member leaving a shared one) may serve the Services still waiting; a
    // claim deleted by hand is noticed by its owner. Creations are our own doing and need no reconcile.
    claims = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPClaim.class, Service.class)
        .withOnAddFilter(c -> false)
        .withOnUpdateFilter((n, o) -> !SharedClaims.members(n).equals(SharedClaims.members(o)))
        .withSecondaryToPrimaryMapper(c -> {
          Set<ResourceID> ids = new HashSet<>(pending(context));
          ids.addAll(holders(c));
          return ids;
        }).build(), context);
    return List.of(groups, claims);
  }

  /** The Services holding a claim: its owner, or the members of a shared one. */
  private static Set<ResourceID> holders(IPClaim c) {
    Set<ResourceID> ids = new HashSet<>();
    ClaimOwner o = c.getSpec() == null ? null : c.getSpec().owner();
    if (o != null && CONTROLLER.equals(o.controller()) && "Service".equals(o.kind())) {
      ids.add(new ResourceID(o.name(), o.namespace()));
    }
    for (ShareMember m : SharedClaims.members(c)) {
      int slash = m.service().indexOf('/');
      if (slash > 0) {
        ids.add(new ResourceID(m.service().substring(slash + 1), m.service().substring(0, slash)));
      }
    }
    return ids;
  }

  private static Set<ResourceID> pending(EventSourceContext<Service> context) {
    return context.getPrimaryCache().list(s -> VipServices.handles(s) && VipServices.ingress(s).isEmpty()
        && s.getMetadata().getDeletionTimestamp() == null).map(ResourceID::fromResource).collect(Collectors.toSet());
  }

  /**
   * What the cluster says about this Service's addresses: what it holds (own claims, and shared
   * claims listing it that it may keep), what others hold, what its sharing key holds that it could
   * join, and memberships to leave once its new address is published (another key's, still used by
   * others).
   */
  private record State(List<Holding> held, Map<Ip, String> taken, Map<Ip, SharedAddress> joinable,
      Map<Ip, String> heldUnder, Map<Ip, ShareMember> recorded, List<Ip> leaveAfter) {}

  private State state(Service svc, ClaimOwner owner, String key, Map<Ip, String> lost) {
    String me = memberName(svc);
    ClaimOwner keyOwner = key == null ? null : SharedClaims.owner(key);
    List<Holding> held = new ArrayList<>();
    Map<Ip, String> taken = new HashMap<>(lost);
    Map<Ip, SharedAddress> joinable = new HashMap<>();
    Map<Ip, String> heldUnder = new HashMap<>(); // "" own claim, else the sharing key
    Map<Ip, ShareMember> recorded = new HashMap<>();
    List<Ip> leaveAfter = new ArrayList<>();
    Set<Ip> seen = new HashSet<>();
    for (IPClaim c : claims.list(c -> c.getSpec() != null).toList()) {
      Ip ip = ClaimAddresses.of(c);
      if (ip == null) {
        continue;
      }
      seen.add(ip);
      ClaimOwner o = c.getSpec().owner();
      Holder r = recent.get(ip);
      if (r != null && r.owner().sameAs(o) && (!SharedClaims.isShared(o)
          || r.members().stream().allMatch(m -> SharedClaims.member(c, m.service()).isPresent()))) {
        recent.remove(ip); // the informer has caught up
      }
      classify(ip, c.getSpec().pool(), o, SharedClaims.members(c), owner, keyOwner, key, me, held, taken, joinable,
          heldUnder, recorded, leaveAfter);
    }
    recent.entrySet().removeIf(e -> e.getValue().stale());
    recent.forEach((ip, h) -> {
      if (!seen.contains(ip)) {
        classify(ip, h.pool(), h.owner(), h.members(), owner, keyOwner, key, me, held, taken, joinable, heldUnder,
            recorded, leaveAfter);
      }
    });
    return new State(held, taken, joinable, heldUnder, recorded, leaveAfter);
  }

  private static void classify(Ip ip, String pool, ClaimOwner o, List<ShareMember> members, ClaimOwner owner,
      ClaimOwner keyOwner, String key, String me, List<Holding> held, Map<Ip, String> taken,
      Map<Ip, SharedAddress> joinable, Map<Ip, String> heldUnder, Map<Ip, ShareMember> recorded, List<Ip> leaveAfter) {
    if (owner.sameAs(o)) {
      held.add(new Holding(ip, pool));
      heldUnder.put(ip, "");
      return;
    }
    if (SharedClaims.isShared(o)) {
      ShareMember mine = members.stream().filter(m -> m.service().equals(me)).findFirst().orElse(null);
      if (mine != null) {
        recorded.put(ip, mine);
        // Its own key's, or another's used by it alone (it keeps the address under its new key, or
        // as its own); another key's used by others too: it moves and leaves afterwards.
        if (o.sameAs(keyOwner) || members.size() == 1) {
          held.add(new Holding(ip, pool));
          heldUnder.put(ip, o.name());
          return;
        }
        leaveAfter.add(ip);
      } else if (o.sameAs(keyOwner)) {
        joinable.put(ip, new SharedAddress(pool, key, members));
        return;
      }
      taken.put(ip, "sharing key " + o.name() + " ("
          + String.join(", ", members.stream().map(ShareMember::service).toList()) + ")");
      return;
    }
    taken.put(ip, o.describe());
  }

  @Override
  public UpdateControl<Service> reconcile(Service svc, Context<Service> context) {
    ClaimOwner owner = owner(svc);
    if (!VipServices.handles(svc)) {
      letGo(svc, owner);
      metrics.pending(memberName(svc), false);
      return UpdateControl.noUpdate();
    }
    dropLegacyFinalizer(svc);
    List<GroupInfo> groupInfos = groups.list(g -> g.getSpec() != null && g.getMetadata().getDeletionTimestamp() == null)
        .map(g -> new GroupInfo(g.getMetadata().getName(), g.getSpec())).toList();
    String key = VipServices.sharingKey(svc);
    ServiceRequest request = new ServiceRequest(svc.getMetadata().getNamespace(), svc.getMetadata().getName(),
        svc.getMetadata().getLabels(), namespaceLabels(svc, groupInfos),
        VipServices.annotations(svc).get(VipAnnotations.IP_GROUP), VipServices.requested(svc),
        VipServices.families(svc), VipServices.optionalFamilies(svc), VipServices.ingress(svc), key,
        key == null ? null : VipServices.member(svc));

    List<VipProblem> extra = new ArrayList<>();
    State state = state(svc, owner, key, Map.of());
    VipPlan plan = VipPlanner.plan(request, groupInfos, state.held(), state.taken(), state.joinable());
    if (!work(plan, state, request).isEmpty()) {
      Outcome o = claimAll(svc, request, groupInfos, owner, extra);
      plan = o.plan();
      state = o.state();
    }
    List<VipProblem> problems = new ArrayList<>(plan.problems());
    problems.addAll(extra);
    boolean complete = problems.stream().noneMatch(VipProblem::blocking);
    List<String> ingress = complete ? plan.ingress().stream().map(Ip::toString).toList() : VipServices.ingress(svc);
    status.publish(svc, ingress, problems, key);
    // Released only once the new ingress is published (claim new, publish, release old); an
    // address still shown stays held.
    Set<String> shown = new HashSet<>(ingress);
    for (Holding h : plan.toRelease()) {
      if (!shown.contains(h.ip().toString())) {
        drop(h.ip(), state.heldUnder().get(h.ip()), owner, memberName(svc));
      }
    }
    if (complete) {
      for (Ip ip : state.leaveAfter()) {
        if (!shown.contains(ip.toString())) {
          drop(ip, "shared", owner, memberName(svc));
        }
      }
    }
    for (VipProblem p : problems) {
      events.warning(svc, p.reason().name(), p.message());
    }
    boolean waiting = problems.stream().anyMatch(VipProblem::blocking);
    metrics.pending(memberName(svc), ingress.isEmpty());
    return waiting ? UpdateControl.<Service>noUpdate().rescheduleAfter(RETRY_PENDING) : UpdateControl.noUpdate();
  }

  /**
   * The holdings that need a write: addresses to claim, and kept addresses held in the wrong form
   * (an own claim of a Service that now has a sharing key, a shared one of a Service whose key
   * changed) or whose recorded sharing entry (ports, backend) is out of date.
   */
  private static List<Holding> work(VipPlan plan, State state, ServiceRequest req) {
    List<Holding> out = new ArrayList<>(plan.toClaim());
    for (Holding h : plan.keep()) {
      String under = state.heldUnder().get(h.ip());
      String wanted = req.sharing() ? req.sharingKey() : "";
      ShareMember rec = state.recorded().get(h.ip());
      if (!wanted.equals(under) || (req.sharing() && (rec == null || !rec.sameEntry(req.member())))) {
        out.add(h);
      }
    }
    return out;
  }

  private record Outcome(VipPlan plan, State state) {}

  /**
   * Plans and claims until every claim succeeds, re-planning around addresses others took first.
   * Only planning is serialized: the chosen fresh addresses are reserved in {@link #recent} under
   * the lock, so the next Service's plan skips them, and claimed on the API server outside it, so
   * claims of many Services are in flight at once. The API server still decides who wins.
   */
  private Outcome claimAll(Service svc, ServiceRequest request, List<GroupInfo> groupInfos, ClaimOwner owner,
      List<VipProblem> extra) {
    Map<Ip, String> lost = new HashMap<>();
    ClaimOwner holderOwner = request.sharing() ? SharedClaims.owner(request.sharingKey()) : owner;
    List<ShareMember> members = request.sharing() ? List.of(request.member()) : List.of();
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      State state;
      List<Holding> work;
      Map<Ip, Holder> reserved = new HashMap<>();
      synchronized (allocation) {
        state = state(svc, owner, request.sharingKey(), lost);
        VipPlan plan = VipPlanner.plan(request, groupInfos, state.held(), state.taken(), state.joinable());
        work = work(plan, state, request);
        for (Holding h : work) {
          if (state.heldUnder().get(h.ip()) == null && !recent.containsKey(h.ip())) {
            Holder r = new Holder(h.pool(), holderOwner, members, System.nanoTime());
            recent.put(h.ip(), r);
            reserved.put(h.ip(), r);
          }
        }
      }
      boolean again = false;
      for (Holding h : work) {
        String holder;
        int problems = extra.size();
        try {
          holder = take(h, request, owner, state.heldUnder().get(h.ip()), extra);
        } catch (RuntimeException e) {
          unreserve(reserved);
          throw e;
        }
        if (holder == null) {
          if (extra.size() == problems) {
            reserved.remove(h.ip()); // ours now: take() recorded it
          }
          continue;
        }
        if (request.requested().stream().anyMatch(x -> x.trim().equals(h.ip().toString()))) {
          extra.add(new VipProblem(VipProblem.Reason.AddressUnavailable, "requested " + h.ip() + " is held by " + holder));
        } else {
          lost.put(h.ip(), holder);
          again = true;
        }
      }
      unreserve(reserved);
      if (!again) {
        State after = state(svc, owner, request.sharingKey(), lost);
        return new Outcome(VipPlanner.plan(request, groupInfos, after.held(), after.taken(), after.joinable()), after);
      }
    }
    State after = state(svc, owner, request.sharingKey(), lost);
    return new Outcome(VipPlanner.plan(request, groupInfos, after.held(), after.taken(), after.joinable()), after);
  }

  /** Drops reservations that did not become claims (only those still as this call left them). */
  private void unreserve(Map<Ip, Holder> reserved) {
    reserved.forEach(recent::remove);
  }

  /**
   * Claims one address in the form the Service needs (its own claim, or a membership of its
   * sharing key's claim), converting a claim it holds in the other form. Returns null when the
   * address is the Service's now (or a clash was reported in {@code extra}), else its holder.
   */
  private String take(Holding h, ServiceRequest req, ClaimOwner owner, String heldUnder, List<VipProblem> extra) {
    String me = req.key();
    if (req.sharing()) {
      if ("".equals(heldUnder)) {
        ledger.release(h.ip(), owner); // its own claim becomes the key's (the Service is its first member)
      } else if (heldUnder != null && !heldUnder.equals(req.sharingKey())) {
        shared.leave(h.ip(), me); // another key's, used by it alone
      }
      SharedClaims.Joined j = shared.join(h.ip(), h.pool(), req.sharingKey(), req.member());
      switch (j.outcome()) {
        case CREATED, JOINED -> {
          if (j.outcome() == SharedClaims.Outcome.CREATED && heldUnder == null) {
            metrics.allocated(h.pool());
          }
          List<ShareMember> members = new ArrayList<>();
          members.add(req.member());
          recent.put(h.ip(), new Holder(h.pool(), SharedClaims.owner(req.sharingKey()), members, System.nanoTime()));
          return null;
        }
        case CLASH -> {
          extra.add(new VipProblem(VipProblem.Reason.PortClash, j.detail()));
          return null;
        }
        default -> {
          return j.detail();
        }
      }
    }
    if (heldUnder != null && !heldUnder.isEmpty()) {
      shared.leave(h.ip(), me); // it was the only member: the address becomes its own
    }
    ClaimResult r = ledger.claim(h.ip(), h.pool(), owner);
    if (r.ours()) {
      if (r.outcome() == ClaimResult.Outcome.CLAIMED && heldUnder == null) {
        metrics.allocated(h.pool());
      }
      recent.put(h.ip(), new Holder(h.pool(), owner, List.of(), System.nanoTime()));
      return null;
    }
    return r.holder().describe();
  }

  /** Releases an address the Service holds: its own claim, or its membership of a shared one. */
  private void drop(Ip ip, String heldUnder, ClaimOwner owner, String me) {
    if (heldUnder == null || heldUnder.isEmpty()) {
      release(ip, owner);
    } else {
      shared.leave(ip, me);
      recent.remove(ip);
    }
  }

  private Map<String, String> namespaceLabels(Service svc, List<GroupInfo> groupInfos) {
    if (groupInfos.stream().noneMatch(g -> g.spec().namespaceSelector() != null)) {
      return Map.of();
    }
    Namespace ns = client.namespaces().withName(svc.getMetadata().getNamespace()).get();
    return ns == null || ns.getMetadata().getLabels() == null ? Map.of() : ns.getMetadata().getLabels();
  }

  /** The addresses claimed for this Service, own or shared (from the informer and this process's recent claims). */
  private Map<Ip, String> claimed(Service svc, ClaimOwner owner) {
    State s = state(svc, owner, null, Map.of());
    Map<Ip, String> out = new HashMap<>(s.heldUnder());
    for (Ip ip : s.leaveAfter()) {
      out.put(ip, "shared");
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

  /** Releases everything the Service holds, and returns the addresses it held. */
  private Set<String> releaseAll(Service svc, ClaimOwner owner) {
    Map<Ip, String> ours = claimed(svc, owner);
    Set<String> released = new HashSet<>();
    ours.forEach((ip, under) -> {
      drop(ip, under, owner, memberName(svc));
      released.add(ip.toString());
    });
    for (String s : VipServices.ingress(svc)) {
      try {
        if (release(Ip.parse(s), owner)) {
          released.add(s);
        }
      } catch (RuntimeException e) {
        // not an address of ours
      }
    }
    return released;
  }

  /** No longer ours to serve (type or class changed): release, clear our ingress, drop the finalizer. */
  private void letGo(Service svc, ClaimOwner owner) {
    Set<String> released = releaseAll(svc, owner);
    List<String> ingress = VipServices.ingress(svc);
    // Only an ingress made of addresses this Service held is ours to clear.
    if (!ingress.isEmpty() && released.containsAll(ingress)) {
      status.write(svc, List.of(), null);
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

  /** The old operator's finalizer: our own one protects the Service now, so the old one goes. */
  private void dropLegacyFinalizer(Service svc) {
    if (svc.getMetadata().getFinalizers() == null
        || !svc.getMetadata().getFinalizers().contains(VipAnnotations.LEGACY_FINALIZER)) {
      return;
    }
    try {
      client.services().inNamespace(svc.getMetadata().getNamespace()).withName(svc.getMetadata().getName())
          .edit(s -> {
            s.getMetadata().getFinalizers().remove(VipAnnotations.LEGACY_FINALIZER);
            return s;
          });
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }

  /** Deletion: release every claim (or membership) of the Service; a claim already gone is fine. */
  @Override
  public DeleteControl cleanup(Service svc, Context<Service> context) {
    releaseAll(svc, owner(svc));
    dropLegacyFinalizer(svc);
    metrics.pending(memberName(svc), false);
    return DeleteControl.defaultDelete();
  }
}
