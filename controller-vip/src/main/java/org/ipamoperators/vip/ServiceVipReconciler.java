package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
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
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.kube.RetryBackoff;
import org.ipamoperators.controller.common.ledger.ClaimIndex;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.plan.GroupInfo;
import org.ipamoperators.vip.plan.ServiceRequest;
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
 * <p>No finalizer, which would cost a write per Service. java-operator-sdk's "reconcile on all
 * events" mode hands this reconciler the delete event with the Service's last state, and the
 * Service's claims (of its uid: a Service re-created under the same name is another Service) are
 * released then: it is gone from the API, so nothing shows the address any more. Claims of Services
 * deleted while no operator ran are released by the {@link OrphanSweep}. A finalizer left by an
 * older version (or the old operator's) is removed once, so those Services stay deletable.
 *
 * <p>Whenever a Service stops holding an address while it still exists (no longer a LoadBalancer of
 * ours, or its pool no longer offers it), the address leaves its status before its claim is deleted.
 *
 * <p>Planning and claiming are {@link ClaimTaker}'s, giving back is {@link ServiceRelease}'s; this
 * class reads the informers, sequences the steps and reports.
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

  private final KubernetesClient client;
  private final EventRecorder events;
  private final VipMetrics metrics;
  private final VipSettings settings;
  /** This reconciler's status writes that leave a Service served: their echoes need no reconcile. */
  private final OwnStatusWrites ownWrites = new OwnStatusWrites();
  private final ServiceStatusWriter status;
  private final ServiceRelease release;
  private final ClaimTaker taker;
  /** Services whose status write was refused: tried again, 2 s doubling to 30 s, until it goes through. */
  private final RetryBackoff retries = new RetryBackoff(Duration.ofSeconds(2), Duration.ofSeconds(30));
  /**
   * Every claim this process saw (informer events and its own writes), shrunk only by deletes it
   * observed, and the addresses its threads are claiming right now (see {@link ClaimIndex}).
   * Planning reads it, never a copy of the informer cache: a claim made here is visible to every
   * thread from the moment its create returned.
   */
  private final ClaimIndex index = VipFacts.newIndex();
  private volatile boolean indexReady;
  private InformerEventSource<IPGroup, Service> groups;
  private InformerEventSource<IPClaim, Service> claims;
  private final OrphanSweep sweep;

  /** With the settings of the environment ({@link VipSettings#fromEnvironment}). */
  public ServiceVipReconciler(KubernetesClient client) {
    this(client, new VipMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()), Set.of(),
        VipSettings.fromEnvironment());
  }

  /** Serving the Services of {@code namespaces} (all when empty): the sweep looks at their claims only. */
  ServiceVipReconciler(KubernetesClient client, VipMetrics metrics, Set<String> namespaces, VipSettings settings) {
    this.client = client;
    this.settings = settings;
    ClusterLedger ledger = new ClusterLedger(client);
    SharedClaims shared = new SharedClaims(client, index);
    this.events = new EventRecorder(client, "vip-controller");
    this.metrics = metrics;
    this.status = new ServiceStatusWriter(client, ownWrites);
    this.release = new ServiceRelease(client, ledger, index, shared, status);
    this.taker = new ClaimTaker(ledger, index, shared, release, metrics);
    this.sweep = new OrphanSweep(client, index, namespaces, release::release,
        (ip, m) -> shared.leave(ip, m.service(), m.uid()), this::awaitIndex, settings);
  }

  /**
   * What registering this reconciler must set beside its annotation: the filters that know its settings and
   * its own status writes (see {@link VipControllers#register}).
   */
  void configure(ControllerConfigurationOverrider<Service> o) {
    o.withOnAddFilter(new VipServiceFilter(settings));
    o.withOnUpdateFilter(new VipServiceFilter.OnUpdate(ownWrites, settings));
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
    return ServiceRelease.memberName(s);
  }

  @Override
  public List<EventSource<?, Service>> prepareEventSources(EventSourceContext<Service> context) {
    // A new or changed pool may serve the Services still waiting, and may no longer offer what
    // some Services hold (they report it). Status updates of a pool change nothing here.
    // Neither source is read per Service (getSecondaryResources), so java-operator-sdk keeps no
    // primary-to-secondary index for them: it would map every claim to every pending Service, on
    // every event, filtered or not (quadratic in a catch-up).
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

  private Set<ResourceID> pending(EventSourceContext<Service> context) {
    return context.getPrimaryCache().list(s -> settings.handles(s) && VipServices.ingress(s).isEmpty()
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
      ownWrites.forget(svc);
      retries.reset(svc.getMetadata().getUid());
      awaitIndex();
      releaseDeleted(svc, owner);
      return notPending(svc);
    }
    sweep.startOnce();
    if (svc.getMetadata().getDeletionTimestamp() != null) {
      // Being deleted: it keeps showing (and holding) its addresses until it is gone, and its delete
      // event releases them. Only a finalizer of an older version would keep it: removed.
      release.dropOldFinalizers(svc);
      return notPending(svc);
    }
    if (!settings.handles(svc)) {
      awaitIndex();
      Set<String> released = release.letGo(svc, owner);
      if (!released.isEmpty()) {
        LOG.info("Service {} is no longer served: released {}", memberName(svc), released);
      }
      return notPending(svc);
    }
    release.dropOldFinalizers(svc);
    awaitIndex();
    return serve(svc, owner);
  }

  /**
   * Releases what a deleted Service held. A failure is never handed to java-operator-sdk (see
   * {@link OrphanSweep#retryRelease}): the sweep's thread tries again until it goes through.
   */
  private void releaseDeleted(Service svc, ClaimOwner owner) {
    try {
      release.deleted(svc, owner);
    } catch (RuntimeException e) {
      LOG.warn("releasing what deleted Service {} held failed: {}", memberName(svc), e.toString());
      sweep.retryRelease(svc, () -> release.deleted(svc, owner));
    }
  }

  private UpdateControl<Service> notPending(Service svc) {
    metrics.pending(memberName(svc), false);
    return UpdateControl.noUpdate();
  }

  /**
   * Plans and claims, publishes what the Service holds with the condition saying why, and only then
   * gives back what it no longer needs (claim new, publish, release old).
   */
  private UpdateControl<Service> serve(Service svc, ClaimOwner owner) {
    List<GroupInfo> groupInfos = VipFacts.groups(groups.list(g -> true).toList());
    ServiceRequest request = VipFacts.request(svc, groupInfos, name -> client.namespaces().withName(name).get());
    List<VipProblem> extra = new ArrayList<>();
    ClaimTaker.Settled settled = taker.settle(request, groupInfos, owner, extra);
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
    release.afterPublish(svc, owner, plan, settled.holdings(), new HashSet<>(ingress), complete);
    for (VipProblem p : problems) {
      events.warning(svc, p.reason().name(), p.message());
    }
    metrics.pending(memberName(svc), ingress.isEmpty());
    return complete ? UpdateControl.noUpdate() : UpdateControl.<Service>noUpdate().rescheduleAfter(RETRY_PENDING);
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

}
