package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.cloud.baremetal.BareMetalNodeNetwork;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.kube.RetryBackoff;
import org.ipamoperators.controller.common.ledger.BlockLedger;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.placement.Unplaceable;
import org.ipamoperators.core.pool.PoolOverlaps;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.NetworkCapabilities;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.cloud.NodeNetworks;
import org.ipamoperators.egressip.network.NetworkDetector;
import org.ipamoperators.egressip.network.NetworkType;
import org.ipamoperators.egressip.network.NetworkWrite;
import org.ipamoperators.egressip.network.Platform;
import org.ipamoperators.egressip.plan.ClaimFact;
import org.ipamoperators.egressip.plan.CloudAttachment;
import org.ipamoperators.egressip.plan.EgressDecision;
import org.ipamoperators.egressip.plan.EgressInputs;
import org.ipamoperators.egressip.plan.EgressPlan;
import org.ipamoperators.egressip.plan.EgressPlanner;
import org.ipamoperators.egressip.plan.EgressPolicy;
import org.ipamoperators.egressip.plan.EgressWrites;
import org.ipamoperators.egressip.plan.NamespaceProblem;
import org.ipamoperators.egressip.plan.NamespaceState;
import org.ipamoperators.egressip.plan.NodeFacts;
import org.ipamoperators.egressip.plan.Orphans;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles one EgressIPAM in four steps: observe ({@link EgressViews}: informer caches with our own
 * writes over them, plus the platform's description of the nodes), decide ({@link EgressPolicy#decide},
 * pure), apply in the order {@link EgressWrites} gives (unpublish, claim and publish, cloud, network,
 * release once nothing shows an address: {@link EgressPublisher}, {@link EgressNetwork}), report
 * ({@link EgressStatus}, Events). Every namespace's problem stays with that namespace; a refused write
 * keeps its address claimed and is retried with back-off.
 *
 * <p>Cost follows change: reads come from informers that keep only the fields used, a namespace
 * is looked up by an index on its egressipam annotation, a claim is parsed once per version, Node
 * heartbeats do not trigger a pass, and only objects whose content changes are written.
 */
@ControllerConfiguration(name = "egressipam", finalizerName = EgressAnnotations.FINALIZER,
    maxReconciliationInterval = @MaxReconciliationInterval(interval = 5, timeUnit = TimeUnit.MINUTES))
public class EgressIPAMReconciler implements Reconciler<EgressIPAM>, Cleaner<EgressIPAM> {
  /** The label older versions wrote on a claim once published; still read, no longer written. */
  static final String LABEL_PUBLISHED = EgressFacts.LABEL_PUBLISHED;
  static final String LABEL_ORIGIN = "ipam.ipamoperators.org/origin";
  private static final Logger LOG = LoggerFactory.getLogger(EgressIPAMReconciler.class);
  // A refused IPAM looks again this often: the older IPAM's deletion or edit starts no pass of this one.
  private static final Duration OVERLAP_RECHECK = Duration.ofSeconds(15);

  private final KubernetesClient client;
  private final ClusterLedger ledger;
  private final BlockLedger blockLedger;
  private final EventRecorder events;
  private final NetworkDetector detector;
  private final Platform.Known platforms;
  private final Clock clock;
  private final EgressMetrics metrics;
  private final NodeNetworks networks;
  private final EgressViews views;
  private final EgressPublisher publisher;
  private final EgressNetwork egressNetwork;
  private final EgressCleanup deletion;
  private final RetryBackoff backoff = new RetryBackoff(Duration.ofSeconds(2), Duration.ofSeconds(30));
  private final NextPass nextPass = new NextPass(backoff);
  private volatile EgressSettings settings;
  // When each node last counted as failed, per IPAM: a timing hint, not allocation state (lost on
  // restart, which at worst lets a flapping node take addresses once more).
  private final Map<String, Map<String, Instant>> failureHistory = new ConcurrentHashMap<>();
  // The previous pass's plan per IPAM, so the next one decides again only what changed. A cache:
  // empty after a restart (the first pass plans in full), and now and then a pass also plans in
  // full and compares; the ledger, not this, is what keeps an address to one owner.
  private final Map<String, EgressPlanner.Memory> plans = new ConcurrentHashMap<>();
  private final Map<String, Instant> lastFullPlan = new ConcurrentHashMap<>();
  // Orphans seen by the previous passes, per IPAM: memory only; after a restart the grace starts
  // over, which only delays a take-off (see Orphans).
  private final Map<String, Orphans.Watch> orphanWatch = new ConcurrentHashMap<>();
  // Who attached in the previous pass, per IPAM: only so the Event telling it is left to OpenShift
  // comes once per change (again after a restart), not every pass.
  private final Map<String, CloudAttachment> attachmentTold = new ConcurrentHashMap<>();

  /** What one pass observed: the decision's inputs and what the apply step needs of the cluster. */
  private record Observed(EgressIPAM ipam, NetworkType network, Platform platform, NodeNetworks.Selection selection,
      NodeNetwork nodeNetwork, CloudAttachment attachment, Map<String, Namespace> opted,
      Map<Ip, HeldAddress> held, List<ClaimFact> claims, List<Node> nodes, Collection<HostSubnet> subnets,
      EgressInputs inputs) {}

  /** What one pass's writes left to report and to retry. */
  private record Applied(List<String> failures, List<String> writeFailures, boolean claimRetry, boolean cloudRetry,
      EgressWrites.Release released) {}

  public EgressIPAMReconciler(KubernetesClient client) {
    this(client, Clock.systemUTC(), new SimpleMeterRegistry());
  }

  public EgressIPAMReconciler(KubernetesClient client, Clock clock, MeterRegistry registry) {
    this(client, clock, registry, new BareMetalNodeNetwork());
  }

  /**
   * With the platform's {@link NodeNetwork}: bare metal needs no calls; a cloud module attaches the
   * addresses to the nodes' interfaces, reports capacity and the addresses it sees in use.
   */
  public EgressIPAMReconciler(KubernetesClient client, Clock clock, MeterRegistry registry, NodeNetwork nodeNetwork) {
    this(client, clock, registry, NodeNetworks.fixed(nodeNetwork));
  }

  /** With the network chosen per reconcile from the platform (bare metal, EC2 on AWS). */
  public EgressIPAMReconciler(KubernetesClient client, Clock clock, MeterRegistry registry, NodeNetworks networks) {
    this(client, clock, registry, networks, EgressSettings.fromEnvironment());
  }

  public EgressIPAMReconciler(KubernetesClient client, Clock clock, MeterRegistry registry, NodeNetworks networks,
      EgressSettings settings) {
    this.networks = networks;
    this.client = client;
    this.settings = settings;
    this.metrics = new EgressMetrics(registry);
    this.views = new EgressViews(client);
    this.ledger = new ClusterLedger(client);
    this.blockLedger = new BlockLedger(client, views::wroteBlock);
    this.events = new EventRecorder(client, "egressipam-controller");
    this.detector = new NetworkDetector(client);
    this.platforms = new Platform.Known(client, settings.platform());
    this.clock = clock;
    // Namespaces and network objects are written in parallel: each is a few round trips, independent of the others.
    ExecutorService writers = Executors.newFixedThreadPool(settings.writers(), r -> {
      Thread t = new Thread(r, "egressip-writer");
      t.setDaemon(true);
      return t;
    });
    this.publisher = new EgressPublisher(client, ledger, blockLedger, events, views, writers);
    this.egressNetwork = new EgressNetwork(client, views, writers);
    this.deletion = new EgressCleanup(client, detector, platforms, networks, ledger, blockLedger, events, views, publisher,
        egressNetwork, backoff, this::forget);
  }

  /**
   * How long an orphan (see {@link Orphans}) must be seen before it is taken off: at least two
   * passes and {@code minimum}; by default 30 s (see {@link EgressSettings}).
   */
  public EgressIPAMReconciler orphanGrace(Duration minimum, int passes) {
    this.settings = settings.withOrphanGrace(minimum, passes);
    orphanWatch.clear();
    return this;
  }

  @Override
  public List<EventSource<?, EgressIPAM>> prepareEventSources(EventSourceContext<EgressIPAM> context) {
    return views.sources(context, events);
  }

  private static Map<String, String> annotations(HasMetadata o) {
    return EgressFacts.annotations(o);
  }

  @Override
  public UpdateControl<EgressIPAM> reconcile(EgressIPAM ipam, Context<EgressIPAM> context) {
    long start = System.nanoTime();
    try {
      return pass(ipam, context);
    } finally {
      metrics.pass(ipam.getMetadata().getName(), Duration.ofNanos(System.nanoTime() - start));
    }
  }

  private UpdateControl<EgressIPAM> pass(EgressIPAM ipam, Context<EgressIPAM> context) {
    String name = ipam.getMetadata().getName();
    deletion.dropLegacyFinalizer(ipam);
    // Only IPAMs that can serve take part: an invalid one is told so (InvalidSpec), one being deleted blocks nobody.
    Optional<PoolOverlaps.Refusal> overlap = PoolOverlaps.decide(context.getPrimaryCache().list()
        .filter(i -> i.getMetadata().getDeletionTimestamp() == null && EgressPlanner.validate(i.getSpec()).isEmpty())
        .map(EgressStatus::poolOwner).toList()).refusal(EgressStatus.KIND, name);
    if (overlap.isPresent()) {
      // Serves nothing and takes nothing away: what it published before stays, claimed, until it no longer overlaps.
      events.warning(ipam, "OverlappingCIDRs", overlap.get().message());
      return EgressStatus.patchIfChanged(ipam, EgressStatus.refused(ipam, overlap.get()), OVERLAP_RECHECK);
    }
    long observeStart = System.nanoTime();
    Observed seen = observe(ipam);
    Instant now = clock.instant();
    EgressDecision decision = decide(seen, now);
    metrics.plan(name, Duration.ofNanos(System.nanoTime() - observeStart),
        seen.inputs().namespaces().size() - decision.reused(), decision.reused());
    EgressPlan plan = decision.plan();
    decision.capacityProblems().forEach((node, message) -> seen.nodes().stream()
        .filter(n -> n.getMetadata().getName().equals(node)).findFirst()
        .ifPresent(n -> events.warning(n, "InvalidEgressCapacity", message)));
    if (!plan.specValid()) {
      String message = plan.specMessage();
      events.warning(ipam, "InvalidSpec", message);
      return EgressStatus.patchIfChanged(ipam, EgressStatus.status(ipam, seen.network(), seen.platform(), plan, false,
          "InvalidSpec", message, List.of(), decision.capacityProblems()), null);
    }
    Applied applied = apply(seen, decision, now);
    return report(seen, decision, applied, now);
  }

  // ---------------------------------------------------------------- observe

  private Observed observe(EgressIPAM ipam) {
    String name = ipam.getMetadata().getName();
    NetworkType network = detector.detect();
    Platform platform = platforms.current();
    NodeNetworks.Selection selection = networks.select(platform);
    NodeNetwork nodeNetwork = selection.network().configuredBy(annotations(ipam));
    NetworkCapabilities caps = nodeNetwork.capabilities();
    Map<String, Namespace> opted = views.optedIn(name);
    List<NamespaceState> wanting = opted.values().stream().filter(ns -> ns.getMetadata().getDeletionTimestamp() == null)
        .map(EgressFacts::namespace).toList();
    Map<Ip, HeldAddress> held = new HashMap<>();
    List<ClaimFact> claims = views.claimFacts(name, held);
    List<Node> allNodes = views.nodes();
    // Who attaches to the cloud interfaces: on OVN-Kubernetes where OpenShift does (CNCC), not us.
    // Reading the cloud for the addresses in use in the subnets (seesForeignAddresses) is another
    // path and stays: allocation still skips what other resources use.
    CloudAttachment attachment = EgressNetwork.cloudAttachment(platform, caps, network, allNodes);
    Collection<HostSubnet> subnets = network == NetworkType.OPENSHIFT_SDN ? views.hostSubnetView() : List.of();
    List<NodeFacts> nodeFacts = views.nodeFacts(ipam, nodeNetwork, attachment.byThisController(), allNodes, subnets);
    EgressInputs inputs = new EgressInputs(name, ipam.getSpec(), wanting, claims, nodeFacts,
        new EgressInputs.PlatformNetwork(attachment.byThisController(), caps.reportsCapacity(),
            caps.seesForeignAddresses(), platform.needsCloudApi()),
        caps.seesForeignAddresses() ? EgressViews.inUse(ipam, nodeNetwork) : Map.of());
    return new Observed(ipam, network, platform, selection, nodeNetwork, attachment, opted, held, claims, allNodes,
        subnets, inputs);
  }

  // ---------------------------------------------------------------- decide

  /**
   * The decision from the previous pass's plan; when none is kept (first pass, restart) a full one.
   * Now and then ({@link EgressSettings#fullPlanEvery}) the full decision is made as well: a
   * difference is logged and counted, and the full one is used.
   */
  private EgressDecision decide(Observed seen, Instant now) {
    String name = seen.ipam().getMetadata().getName();
    Map<String, Instant> failedBefore = failureHistory.getOrDefault(name, Map.of());
    Orphans.Watch watched = orphanWatch.getOrDefault(name, Orphans.Watch.start(settings.orphanGrace()));
    EgressPlanner.Memory previous = settings.incremental() ? plans.get(name) : null;
    Instant lastFull = lastFullPlan.get(name);
    EgressDecision decision = EgressPolicy.decide(seen.inputs(), failedBefore, now,
        previous == null ? EgressPlanner.Memory.NONE : previous, watched);
    boolean check = previous == null || lastFull == null
        || Duration.between(lastFull, now).compareTo(settings.fullPlanEvery()) >= 0;
    if (previous != null && check) {
      EgressDecision full = EgressPolicy.decide(seen.inputs(), failedBefore, now, EgressPlanner.Memory.NONE, watched);
      if (!full.plan().equals(decision.plan())) {
        LOG.warn("IPAM {}: the incremental plan differed from the full plan; the full plan is used", name);
        metrics.planMismatch(name);
      }
      decision = full;
    }
    if (check) {
      lastFullPlan.put(name, now);
    }
    plans.put(name, decision.memory());
    orphanWatch.put(name, decision.orphans().next());
    failureHistory.put(name, decision.failureHistory());
    return decision;
  }

  // ---------------------------------------------------------------- apply

  /** The writes, in the order {@link EgressWrites} gives: unpublish, claim and publish, cloud, network, release. */
  private Applied apply(Observed seen, EgressDecision decision, Instant now) {
    EgressIPAM ipam = seen.ipam();
    String name = ipam.getMetadata().getName();
    EgressPlan plan = decision.plan();
    long start = System.nanoTime();
    List<String> failures = new ArrayList<>(decision.platformProblems());
    Map<String, Set<Ip>> leaving = new HashMap<>();
    for (Ip ip : plan.toRelease()) {
      String ns = seen.held().get(ip).namespace();
      if (!plan.served().containsKey(ns) && views.namespace(ns) != null) {
        leaving.computeIfAbsent(ns, k -> new HashSet<>()).add(ip);
      }
    }
    Set<String> cleared = new HashSet<>(leaving.keySet());
    List<String> writeFailures = new ArrayList<>(publisher.unpublishLeavers(name, leaving));
    Map<String, List<Ip>> served = new ConcurrentSkipListMap<>(plan.served());
    boolean claimRetry = publisher.claimAndPublish(name, plan, decision, seen.opted(), served);
    Set<Ip> servedIps = new HashSet<>();
    served.values().forEach(servedIps::addAll);
    // Left to OpenShift: not even the placement's moves go to the cloud (OVN places, CNCC attaches).
    List<AddressChange> changes = seen.attachment() == CloudAttachment.OPENSHIFT ? List.of()
        : EgressPolicy.cloudChanges(plan, servedIps, seen.attachment().byThisController());
    EgressNetwork.CloudOutcome cloud = EgressNetwork.applyCloud(seen.nodeNetwork(), changes);
    List<String> cloudFailures = new ArrayList<>(cloud.failures());
    if (seen.attachment().byThisController() && !decision.orphans().due().isEmpty()) {
      cloudFailures.addAll(takeOffOrphans(ipam, seen.nodeNetwork(), decision.orphans().due(), now));
    }
    if (!decision.platformProblems().isEmpty() || !cloudFailures.isEmpty()) {
      // One Event per distinct message (the recorder counts repeats): which call, node and code.
      List<String> all = new ArrayList<>(decision.platformProblems());
      all.addAll(cloudFailures);
      events.warning(ipam, "CloudCallFailed", String.join("; ", all));
    }
    long networkStart = System.nanoTime();
    metrics.step(name, "claim+publish", Duration.ofNanos(networkStart - start));
    if (seen.network() == NetworkType.OPENSHIFT_SDN) {
      cleared.addAll(EgressWrites.toClear(served, views.netNamespacesShowing(seen.held().keySet())));
    }
    NetworkWrite write = EgressPolicy.networkWrite(name, ipam.getSpec(), plan, served, cleared, decision.nodes(),
        seen.platform().needsCloudApi()).withForeign(EgressPolicy.foreignIn(name, ipam.getSpec(), seen.claims()));
    writeFailures.addAll(egressNetwork.write(seen.network(), write, seen.subnets(), seen.nodes()));
    // Released last, and only what no place shows any more.
    EgressWrites.Release released = EgressWrites.release(plan.toRelease(), new ShownAfterWrites(views, name,
        seen.network(), seen.held(), false, new ShownAfterWrites.Interfaces(decision.attached(),
            decision.attachmentsUnknown(), cloud.detached()))::find);
    publisher.release(name, released.now().stream().map(seen.held()::get).toList())
        .forEach((ip, why) -> writeFailures.add("release of " + ip + " in the ledger: " + why));
    if (!writeFailures.isEmpty()) {
      events.warning(ipam, "NetworkWriteFailed", String.join("; ", writeFailures));
    }
    if (!released.kept().isEmpty()) {
      LOG.info("IPAM {}: {}", name, released.describeKept());
    }
    metrics.step(name, "network", Duration.ofNanos(System.nanoTime() - networkStart));
    failures.addAll(cloudFailures);
    failures.addAll(writeFailures);
    return new Applied(failures, writeFailures, claimRetry, cloud.retry(), released);
  }

  /**
   * Takes the due orphans off their nodes once the ledger, read again from the API server, shows no
   * claim on them (see {@link OrphanTakeOff} for why this is safe with two replicas); an Event and
   * a count for each. Returns the failures to report.
   */
  private List<String> takeOffOrphans(EgressIPAM ipam, NodeNetwork nodeNetwork, List<Orphans.Orphan> due,
      Instant now) {
    String name = ipam.getMetadata().getName();
    OrphanTakeOff.Outcome out = OrphanTakeOff.run(due,
        ip -> ledger.get(ip).isPresent() || blockLedger.entry(ip) != null, nodeNetwork);
    out.claimed().forEach(o -> LOG.info("IPAM {}: {} on {} is claimed in the API server: not an orphan, left on",
        name, o.address(), o.node()));
    for (Orphans.Orphan o : out.takenOff()) {
      metrics.orphanTakenOff(name);
      events.warning(ipam, "OrphanTakenOff", o.address() + " taken off node " + o.node() + ": " + o.reason(now));
    }
    return out.failures();
  }

  // ---------------------------------------------------------------- report

  private UpdateControl<EgressIPAM> report(Observed seen, EgressDecision decision, Applied applied, Instant now) {
    EgressIPAM ipam = seen.ipam();
    String name = ipam.getMetadata().getName();
    EgressPlan plan = decision.plan();
    EgressStatus.recordMetrics(metrics, ipam, plan, decision.nodes(), decision.verdicts(), now);
    for (NamespaceProblem p : plan.problems()) {
      Namespace n = seen.opted().get(p.namespace());
      if (n != null) {
        events.warning(n, p.rejected() ? "EgressIPRejected" : "EgressIPPending", p.message());
      }
    }
    for (Unplaceable u : plan.placement().unplaceable()) {
      Namespace n = seen.opted().get(u.owner());
      if (n != null) {
        events.warning(n, "EgressIPUnplaceable", u.message());
      }
    }
    CloudAttachment attachment = seen.attachment();
    if (attachment == CloudAttachment.OPENSHIFT && attachmentTold.get(name) != CloudAttachment.OPENSHIFT) {
      events.normal(ipam, "CloudAttachmentLeftToOpenShift", attachment.statusNote());
    }
    attachmentTold.put(name, attachment);
    List<String> failures = new ArrayList<>(applied.failures());
    if (attachment == CloudAttachment.MISSING_MODULE) {
      failures.add("platform " + seen.platform().type() + " needs its cloud module to attach egress IPs to the nodes' "
          + "interfaces, and none is configured"
          + (seen.selection().problem() == null ? "" : " (" + seen.selection().problem() + ")")
          + ": the addresses are allocated and written to the cluster network, but the cloud will not route them");
    }
    NetworkType network = seen.network();
    boolean ok = failures.isEmpty() && network != NetworkType.NONE;
    String reason = network == NetworkType.NONE ? "UnsupportedNetwork"
        : failures.isEmpty() ? "Reconciled" : "NetworkWriteFailed";
    String message = network == NetworkType.NONE
        ? "neither OpenShift SDN (HostSubnet) nor OVN-Kubernetes (EgressIP) is served by this cluster; addresses are allocated but not configured"
        : failures.isEmpty() ? seen.selection().description() : String.join("; ", failures);
    if (attachment.statusNote() != null) {
      message = message.isEmpty() ? attachment.statusNote() : message + "; " + attachment.statusNote();
    }
    EgressIPAM patch = EgressStatus.status(ipam, network, seen.platform(), plan, ok, reason, message, failures,
        decision.capacityProblems());
    Duration next = nextPass.after(name, decision, applied.released(),
        applied.claimRetry() || !applied.writeFailures().isEmpty(), applied.cloudRetry());
    LOG.debug("IPAM {}: served {}, released {}, kept {}, failures {}, next {}", name, plan.served().keySet(),
        applied.released().now(), applied.released().kept().keySet(), failures, next);
    return EgressStatus.patchIfChanged(ipam, patch, next);
  }

  /** IPAM deletion: see {@link EgressCleanup}. */
  @Override
  public DeleteControl cleanup(EgressIPAM ipam, Context<EgressIPAM> context) {
    return deletion.cleanup(ipam);
  }

  /** Drops what is kept in memory for an IPAM whose deletion completed. */
  private void forget(String name) {
    metrics.forget(name);
    failureHistory.remove(name);
    orphanWatch.remove(name);
    attachmentTold.remove(name);
    plans.remove(name);
    lastFullPlan.remove(name);
  }
}
