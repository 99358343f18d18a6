package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
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
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.kube.RetryBackoff;
import org.ipamoperators.controller.common.ledger.ClaimIndex;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClaimResult;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.VipAnnotations;
import org.ipamoperators.vip.legacy.LegacyReservations;
import org.ipamoperators.vip.plan.GroupInfo;
import org.ipamoperators.vip.plan.Holding;
import org.ipamoperators.vip.plan.ServiceHoldings;
import org.ipamoperators.vip.plan.ServiceRequest;
import org.ipamoperators.vip.plan.ServiceOwners;
import org.ipamoperators.vip.plan.ShareMember;
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
 *
 * <p>No finalizer (issue 12: it cost a write per Service). java-operator-sdk's "reconcile on all
 * events" mode hands this reconciler the delete event with the Service's last state, and the
 * Service's claims (of its uid: a Service re-created under the same name is another Service) are
 * released then: it is gone from the API, so nothing shows the address any more. Claims of Services
 * deleted while no operator ran are released by the {@link OrphanSweep}. A finalizer left by an
 * older version (or the old operator's) is removed once, so those Services stay deletable.
 *
 * <p>Whenever a Service stops holding an address while it still exists (no longer a LoadBalancer of
 * ours, or its pool no longer offers it), the address leaves its status before its claim is deleted.
 */
@ControllerConfiguration(name = "vip-services", generationAwareEventProcessing = false,
    triggerReconcilerOnAllEvents = true,
    informer = @Informer(onAddFilter = VipServiceFilter.class, onUpdateFilter = VipServiceFilter.OnUpdate.class,
        itemStore = LeanItemStore.class),
    maxReconciliationInterval = @MaxReconciliationInterval(interval = 5, timeUnit = TimeUnit.MINUTES))
public class ServiceVipReconciler implements Reconciler<Service> {
  public static final String CONTROLLER = "vip";
  private static final Logger LOG = LoggerFactory.getLogger(ServiceVipReconciler.class);
  private static final Duration RETRY_PENDING = Duration.ofSeconds(30);
  /** After a status write refused for a stale view; the informer's update usually comes first. */
  private static final Duration STALE_RETRY = Duration.ofSeconds(1);
  private static final int ATTEMPTS = 20;
  private static final Object[] KEY_LOCKS = new Object[64];

  static {
    java.util.Arrays.setAll(KEY_LOCKS, i -> new Object());
  }
  /** Plans per reconcile, those that lost a reservation to another thread (no write) included. */
  private static final int PLANS = 200;

  private final KubernetesClient client;
  private final ClusterLedger ledger;
  private final SharedClaims shared;
  private final EventRecorder events;
  private final VipMetrics metrics;
  private final ServiceStatusWriter status;
  /** Services whose status write was refused: tried again, 2 s doubling to 30 s, until it goes through. */
  private final RetryBackoff retries = new RetryBackoff(Duration.ofSeconds(2), Duration.ofSeconds(30));
  /**
   * Every claim this process saw (informer events and its own writes), shrunk only by deletes it
   * observed, and the addresses its threads are claiming right now (see {@link ClaimIndex}).
   * Planning reads it, never a copy of the informer cache: a claim made here is visible to every
   * thread from the moment its create returned.
   */
  private final ClaimIndex index = VipFacts.newIndex();
  /** Where first-free searches may start: past what earlier plans found taken (see {@link FirstFreeCursors}). */
  private final FirstFreeCursors firstFree = new FirstFreeCursors(index);
  private volatile boolean indexReady;
  private InformerEventSource<IPGroup, Service> groups;
  private InformerEventSource<IPClaim, Service> claims;
  private final OrphanSweep sweep;

  public ServiceVipReconciler(KubernetesClient client) {
    this(client, new VipMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
  }

  ServiceVipReconciler(KubernetesClient client, VipMetrics metrics) {
    this(client, metrics, Set.of());
  }

  /** Serving the Services of {@code namespaces} (all when empty): the sweep looks at their claims only. */
  ServiceVipReconciler(KubernetesClient client, VipMetrics metrics, Set<String> namespaces) {
    this.client = client;
    this.ledger = new ClusterLedger(client);
    this.shared = new SharedClaims(client, index);
    this.events = new EventRecorder(client, "vip-controller");
    this.metrics = metrics;
    this.status = new ServiceStatusWriter(client);
    this.sweep = new OrphanSweep(client, index, namespaces, this::release,
        (ip, m) -> shared.leave(ip, m.service(), m.uid()), this::awaitIndex);
  }

  /**
   * Starts the orphan sweep: when this replica takes the lead (see {@link VipControllers#register}),
   * and from the first reconcile of any VIP controller (the leader's), for embedders that have no hook.
   */
  void leading() {
    sweep.startOnce();
  }

  public static ClaimOwner owner(Service s) {
    return VipFacts.owner(s);
  }

  private static String memberName(Service s) {
    return s.getMetadata().getNamespace() + "/" + s.getMetadata().getName();
  }

  @Override
  public List<EventSource<?, Service>> prepareEventSources(EventSourceContext<Service> context) {
    // A new or changed pool may serve the Services still waiting, and may no longer offer what
    // some Services hold (they report it). Status updates of a pool change nothing here.
    // Neither source is read per Service (getSecondaryResources), so java-operator-sdk keeps no
    // primary-to-secondary index for them: it would map every claim to every pending Service, on
    // every event, filtered or not (quadratic in a catch-up: most of its CPU and memory).
    sweep.servicesCache(context.getPrimaryCache());
    groups = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPGroup.class, Service.class)
        .withItemStore(new LeanItemStore<>())
        .withPrimaryToSecondaryMapper(p -> Set.of())
        .withOnUpdateFilter((n, o) -> !java.util.Objects.equals(n.getSpec(), o.getSpec())
            // a group being deleted stops serving and stops blocking younger groups that overlap it
            || !java.util.Objects.equals(n.getMetadata().getDeletionTimestamp(), o.getMetadata().getDeletionTimestamp()))
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
    // Every event, filtered or not, feeds the index first.
    claims = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPClaim.class, Service.class)
        .withItemStore(new LeanItemStore<>())
        .withPrimaryToSecondaryMapper(p -> Set.of())
        .withOnAddFilter(c -> false)
        .withOnUpdateFilter((n, o) -> !SharedClaims.members(n).equals(SharedClaims.members(o)))
        .withSecondaryToPrimaryMapper(c -> {
          Set<ResourceID> ids = new HashSet<>(pending(context));
          ids.addAll(holders(c));
          return ids;
        }).build(), context) {
      @Override
      public void onAdd(IPClaim c) {
        index.seen(c);
        super.onAdd(c);
      }

      @Override
      public void onUpdate(IPClaim old, IPClaim c) {
        index.seen(c);
        super.onUpdate(old, c);
      }

      @Override
      public void onDelete(IPClaim c, boolean finalStateUnknown) {
        index.deleted(c);
        super.onDelete(c, finalStateUnknown);
      }
    };
    return List.of(groups, claims, sweep);
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
   * Before the first plan: waits (at most a minute) until the index shows every claim the informer's
   * cache held when the wait began (or it is gone from the cache), since the informer hands its
   * initial list to the index after its cache is filled. Planning earlier is safe, only wasteful:
   * claims the index does not show yet are found on the API server, as 409s.
   */
  private void awaitIndex() {
    if (indexReady) {
      return;
    }
    synchronized (this) {
      if (indexReady) {
        return;
      }
      List<IPClaim> cached = claims.list(c -> ClaimIndex.address(c) != null).toList();
      long end = System.nanoTime() + Duration.ofMinutes(1).toNanos();
      while (System.nanoTime() < end) {
        boolean behind = false;
        for (IPClaim c : cached) {
          if (!index.containsUid(ClaimIndex.address(c), c.getMetadata().getUid())
              && claims.get(ResourceID.fromResource(c)).isPresent()) {
            behind = true;
            break;
          }
        }
        if (!behind) {
          break;
        }
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      indexReady = true;
    }
  }

  @Override
  public UpdateControl<Service> reconcile(Service svc, Context<Service> context) {
    ClaimOwner owner = owner(svc);
    if (context.isPrimaryResourceDeleted()) {
      // Gone from the API, so nothing shows its addresses any more: what this Service (this uid)
      // still holds goes. The event carries its last state.
      OwnStatusWrites.forget(svc);
      retries.reset(svc.getMetadata().getUid());
      awaitIndex();
      holdingsToRelease(svc, owner).forEach((ip, under) -> drop(Ip.parse(ip), under, owner, memberName(svc)));
      metrics.pending(memberName(svc), false);
      return UpdateControl.noUpdate();
    }
    sweep.startOnce();
    if (svc.getMetadata().getDeletionTimestamp() != null) {
      // Being deleted: it keeps showing (and holding) its addresses until it is gone, and its delete
      // event releases them. Only a finalizer of an older version would keep it: removed.
      dropOldFinalizers(svc);
      metrics.pending(memberName(svc), false);
      return UpdateControl.noUpdate();
    }
    if (!VipServices.handles(svc)) {
      awaitIndex();
      letGo(svc, owner);
      metrics.pending(memberName(svc), false);
      return UpdateControl.noUpdate();
    }
    dropOldFinalizers(svc);
    awaitIndex();
    List<GroupInfo> groupInfos = VipFacts.groups(groups.list(g -> true).toList());
    ServiceRequest request = VipFacts.request(svc, groupInfos, name -> client.namespaces().withName(name).get());

    List<VipProblem> extra = new ArrayList<>();
    Settled settled = settle(request, groupInfos, owner, extra);
    VipPlan plan = settled.plan();
    List<VipProblem> problems = new ArrayList<>(plan.problems());
    problems.addAll(extra);
    boolean complete = problems.stream().noneMatch(VipProblem::blocking);
    // Only what the Service holds can be published; a plan it could not fully claim changes nothing.
    Ingress next = complete ? settled.held().publishable(plan.ingress()).orElse(Ingress.unchanged()) : Ingress.unchanged();
    List<String> ingress;
    try {
      ingress = status.publish(svc, next, problems, request.sharingKey());
    } catch (ServiceStatusWriter.StaleView e) {
      // Someone wrote the Service since this view (for a moment two replicas may both act as leader):
      // nothing is released on a stale view. The next pass plans from the new one and gives back what
      // this pass claimed if the Service does not need it.
      LOG.info("{}; planning again", e.getMessage());
      return UpdateControl.<Service>noUpdate().rescheduleAfter(STALE_RETRY);
    } catch (KubernetesClientException e) {
      return statusRefused(svc, next, problems, e);
    }
    retries.reset(svc.getMetadata().getUid());
    // Released only once the new ingress is published (claim new, publish, release old); an
    // address still shown stays held.
    Set<String> shown = new HashSet<>(ingress);
    ServiceHoldings h = settled.holdings();
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
    } else {
      // Claims won in this pass that it cannot publish (another part of the plan was lost meanwhile),
      // or left from an earlier one: held and shown by nobody, so given back until it can have all.
      claimed(svc, owner).forEach((ip, under) -> {
        if (!shown.contains(ip.toString())) {
          drop(ip, under, owner, memberName(svc));
        }
      });
    }
    for (VipProblem p : problems) {
      events.warning(svc, p.reason().name(), p.message());
    }
    boolean waiting = problems.stream().anyMatch(VipProblem::blocking);
    metrics.pending(memberName(svc), ingress.isEmpty());
    return waiting ? UpdateControl.<Service>noUpdate().rescheduleAfter(RETRY_PENDING) : UpdateControl.noUpdate();
  }

  /**
   * The status write was refused or failed: nothing is released (the Service may still show what it
   * held), what this pass claimed stays claimed, and the pass is tried again with back-off until the
   * write goes through. The status cannot carry the reason, so a Warning Event does.
   */
  private UpdateControl<Service> statusRefused(Service svc, Ingress next, List<VipProblem> problems,
      KubernetesClientException e) {
    Duration retry = retries.next(svc.getMetadata().getUid());
    String message = "writing the status of Service " + memberName(svc) + next.describe()
        + (problems.isEmpty() ? "" : " " + problems.stream().map(p -> p.reason() + ": " + p.message()).toList())
        + " failed ("
        + (e.getCode() > 0 ? e.getCode() + ": " : "") + e.getMessage() + "); addresses kept, retrying in "
        + retry.toSeconds() + " s";
    LOG.warn(message);
    events.warning(svc, "StatusWriteFailed", message);
    return UpdateControl.<Service>noUpdate().rescheduleAfter(retry);
  }

  /** The plan claimed for, the ledger view it was made from, and what the Service holds now. */
  private record Settled(VipPlan plan, ServiceHoldings holdings, Ingress.Held held) {}

  /**
   * Plans and claims until every claim of the plan succeeds, re-planning around addresses others
   * hold. No lock around a plan: fresh addresses are reserved in the index one by one (an atomic
   * put-if-absent), so threads planning at the same time pick different ones, and a thread that
   * finds its pick reserved plans again without asking the API server. The API server still
   * decides who holds an address. After {@link #ATTEMPTS} plans that each lost an address, the
   * Service waits (a blocking problem) and nothing unclaimed is ever published.
   */
  private Settled settle(ServiceRequest request, List<GroupInfo> groupInfos, ClaimOwner owner, List<VipProblem> extra) {
    if (!request.sharing()) {
      return settleUnlocked(request, groupInfos, owner, extra);
    }
    // Services of one sharing key plan one after another, so the second joins the address the
    // first just claimed instead of claiming another one for the same key. Other keys and
    // unshared Services are not held up (striped by key).
    synchronized (KEY_LOCKS[Math.floorMod(request.sharingKey().hashCode(), KEY_LOCKS.length)]) {
      return settleUnlocked(request, groupInfos, owner, extra);
    }
  }

  private Settled settleUnlocked(ServiceRequest request, List<GroupInfo> groupInfos, ClaimOwner owner,
      List<VipProblem> extra) {
    Map<Ip, String> lost = new HashMap<>();
    ClaimOwner holderOwner = request.sharing() ? SharedClaims.owner(request.sharingKey()) : owner;
    Settled last = null;
    int attempts = 0; // plans whose claims the API server refused
    for (int plans = 0; attempts < ATTEMPTS && plans < PLANS; plans++) {
      VipFacts.Planned planned = VipFacts.plan(index, request, owner, groupInfos, lost, firstFree);
      ServiceHoldings h = planned.holdings();
      VipPlan plan = planned.plan();
      Ingress.Held held = new Ingress.Held(h.heldUnder().keySet());
      last = new Settled(plan, h, held);
      List<Holding> work = h.work(plan, request);
      if (work.isEmpty()) {
        return last;
      }
      Map<Ip, ClaimIndex.Reservation> reserved = new HashMap<>();
      boolean again = false;
      try {
        for (Holding w : work) {
          if (h.heldUnder().containsKey(w.ip()) || h.joinable().containsKey(w.ip())) {
            continue; // held or joinable: the write converts or joins, nobody else can take it
          }
          ClaimIndex.Reservation r = new ClaimIndex.Reservation(holderOwner, w.pool());
          if (index.reserve(w.ip(), r)) {
            reserved.put(w.ip(), r);
            continue;
          }
          ClaimIndex.Entry e = index.get(w.ip()).orElse(null);
          if (e != null && ((request.sharing() && e.owner().sameAs(holderOwner)) || ServiceOwners.same(owner, e.owner()))) {
            continue; // this Service's (or its key's) own claim or reservation: the write below settles it
          }
          if (!isRequested(request, w.ip())) {
            lost.put(w.ip(), e == null ? "another Service (being claimed)" : VipFacts.entry(e).describe());
            again = true;
          }
        }
        if (again) {
          continue; // somebody reserved our pick meanwhile: plan again, nothing was written
        }
        attempts++;
        for (Holding w : work) {
          int before = extra.size();
          String holder = take(w, request, owner, h.heldUnder().get(w.ip()), extra);
          if (holder == null) {
            if (extra.size() == before) {
              held.granted(w.ip());
            }
            continue;
          }
          if (isRequested(request, w.ip())) {
            extra.add(new VipProblem(VipProblem.Reason.AddressUnavailable, "requested " + w.ip() + " is held by " + holder));
          } else {
            lost.put(w.ip(), holder);
            again = true;
          }
        }
      } finally {
        reserved.forEach(index::unreserve); // a granted claim has replaced its reservation already
      }
      if (!again) {
        return last;
      }
    }
    extra.add(new VipProblem(VipProblem.Reason.AddressUnavailable, "every address planned for " + request.key()
        + " was taken by others first, " + attempts + " times in a row (last: " + String.join("; ",
            lost.entrySet().stream().limit(3).map(e -> e.getKey() + " held by " + e.getValue()).toList())
        + "); will try again"));
    return last;
  }

  private static boolean isRequested(ServiceRequest request, Ip ip) {
    return request.requested().stream().anyMatch(x -> x.trim().equals(ip.toString()));
  }

  /**
   * Claims one address in the form the Service needs (its own claim, or a membership of its
   * sharing key's claim), converting a claim it holds in the other form. Returns null when the
   * address is the Service's now (or a clash was reported in {@code extra}), else its holder.
   * Every answer of the API server goes to the index.
   */
  private String take(Holding h, ServiceRequest req, ClaimOwner owner, String heldUnder, List<VipProblem> extra) {
    String me = req.key();
    if (req.sharing()) {
      if ("".equals(heldUnder)) {
        release(h.ip(), owner); // its own claim becomes the key's (the Service is its first member)
      } else if (heldUnder != null && !heldUnder.equals(req.sharingKey())) {
        shared.leave(h.ip(), me); // another key's, used by it alone
      }
      SharedClaims.Joined j = shared.join(h.ip(), h.pool(), req.sharingKey(), req.member());
      switch (j.outcome()) {
        case CREATED, JOINED -> {
          if (j.outcome() == SharedClaims.Outcome.CREATED && heldUnder == null) {
            metrics.allocated(h.pool());
          }
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
    if (r.claim() != null) {
      index.seen(r.claim());
    }
    if (r.ours() && !ServiceOwners.same(owner, r.holder())) {
      // The claim of an earlier Service of this name (another uid): released by that one's delete
      // event or the sweep, never inherited.
      return r.holder().describe() + " (uid " + r.holder().uid() + ", an earlier Service of this name)";
    }
    if (r.ours()) {
      if (r.outcome() == ClaimResult.Outcome.CLAIMED && heldUnder == null) {
        metrics.allocated(h.pool());
      }
      return null;
    }
    return r.holder().describe();
  }

  /** Releases an address the Service holds: its own claim, or its membership of a shared one. */
  private void drop(Ip ip, String heldUnder, ClaimOwner owner, String me) {
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
  private boolean release(Ip ip, ClaimOwner owner) {
    IPClaim c = index.get(ip).map(ClaimIndex.Entry::claim).orElse(null);
    for (int attempt = 0; attempt < 2; attempt++) {
      if (c == null || c.getSpec() == null || !ServiceOwners.same(owner, c.getSpec().owner())) {
        c = attempt == 0 ? ledger.get(ip).orElse(null) : null;
        if (c == null || !ServiceOwners.same(owner, c.getSpec().owner())) {
          return false;
        }
      }
      try {
        List<io.fabric8.kubernetes.api.model.StatusDetails> deleted = client.resources(IPClaim.class)
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
   * Unpublish, then release: the Service stops showing what it holds before any claim of it is
   * deleted, so no moment exists in which the address is free in the ledger while the Service still
   * announces it (another Service, or a second replica, could take it then). Returns what it held.
   */
  private Set<String> unpublishThenRelease(Service svc, ClaimOwner owner, Set<String> keep) {
    Map<String, String> held = holdingsToRelease(svc, owner);
    held.keySet().removeAll(keep);
    List<String> ingress = VipServices.ingress(svc);
    if (ingress.stream().anyMatch(held::containsKey)) {
      status.write(svc, Ingress.without(ingress, held.keySet()), null);
    }
    held.forEach((ip, under) -> drop(Ip.parse(ip), under, owner, memberName(svc)));
    return held.keySet();
  }

  /** Own claims adopted from a legacy VirtualIP that still stands for this Service: kept until it is migrated. */
  private Set<String> legacyReserved(Service svc, ClaimOwner owner) {
    List<String> adopted = claimed(svc, owner).keySet().stream()
        .filter(ip -> index.get(ip).map(e -> LegacyReservations.isAdoptedFromVirtualIp(e.claim())).orElse(false))
        .map(Ip::toString).toList();
    return LegacyReservations.reserved(client, svc, adopted);
  }

  /** No longer ours to serve (type or class changed): unpublish, release, drop an old finalizer. */
  private void letGo(Service svc, ClaimOwner owner) {
    Set<String> released = unpublishThenRelease(svc, owner, legacyReserved(svc, owner));
    dropOldFinalizers(svc);
    if (!released.isEmpty()) {
      LOG.info("Service {}/{} is no longer served: released {}", svc.getMetadata().getNamespace(),
          svc.getMetadata().getName(), released);
    }
  }

  /**
   * Finalizers nobody removes any more: ours from versions before issue 12 (this one has none), and
   * the old operator's. Removed once (one PATCH, only on Services that carry one), so that upgraded
   * clusters keep their Services deletable.
   */
  private void dropOldFinalizers(Service svc) {
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
