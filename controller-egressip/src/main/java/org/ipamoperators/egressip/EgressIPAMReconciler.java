package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
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
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.ipamoperators.cloud.baremetal.BareMetalNodeNetwork;
import org.ipamoperators.controller.common.kube.Conditions;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.kube.LabelSelectors;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClaimResult;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.failover.FailoverPolicy;
import org.ipamoperators.core.failover.HealthObservation;
import org.ipamoperators.core.failover.NodeVerdict;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.placement.PlacementOptions;
import org.ipamoperators.core.placement.Unplaceable;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.CidrStatus;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.api.EgressIPAMStatus;
import org.ipamoperators.egressip.cloud.NodeNetworks;
import org.ipamoperators.egressip.network.NetworkDetector;
import org.ipamoperators.egressip.network.NetworkType;
import org.ipamoperators.egressip.network.NetworkWrite;
import org.ipamoperators.egressip.network.OvnWriter;
import org.ipamoperators.egressip.network.Platform;
import org.ipamoperators.egressip.network.SdnWriter;
import org.ipamoperators.egressip.plan.ClaimState;
import org.ipamoperators.egressip.plan.EgressPlan;
import org.ipamoperators.egressip.plan.EgressPlanner;
import org.ipamoperators.egressip.plan.NamespaceProblem;
import org.ipamoperators.egressip.plan.NamespaceState;
import org.ipamoperators.egressip.plan.NodeInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles one EgressIPAM: reads the cluster (namespaces, ledger claims, nodes, the network's
 * objects), lets {@link EgressPlanner} decide, then carries the plan out in an order that can be
 * cut off anywhere and resumed: release, claim, publish in the namespace annotation, write the
 * network, report. Every namespace's problem stays with that namespace.
 */
@ControllerConfiguration(name = "egressipam", finalizerName = EgressAnnotations.FINALIZER,
    maxReconciliationInterval = @MaxReconciliationInterval(interval = 5, timeUnit = TimeUnit.MINUTES))
public class EgressIPAMReconciler implements Reconciler<EgressIPAM>, Cleaner<EgressIPAM> {
  static final String CONTROLLER = "egressip";
  static final String LABEL_PUBLISHED = "ipam.ipamoperators.org/published";
  static final String LABEL_ORIGIN = "ipam.ipamoperators.org/origin";
  private static final Logger LOG = LoggerFactory.getLogger(EgressIPAMReconciler.class);
  private static final Duration RETRY_SOON = Duration.ofSeconds(2);
  private static final Duration CLOUD_RETRY = Duration.ofSeconds(10);

  private final KubernetesClient client;
  private final ClusterLedger ledger;
  private final EventRecorder events;
  private final NetworkDetector detector;
  private final Clock clock;
  private final EgressMetrics metrics;
  private final NodeNetworks networks;
  // When each node last counted as failed: a timing hint, not allocation state (lost on restart,
  // which at worst lets a flapping node take addresses once more).
  private final Map<String, Instant> failedNodes = new java.util.concurrent.ConcurrentHashMap<>();
  private final String platformOverride = System.getProperty("ipam.platform", System.getenv("IPAM_PLATFORM"));
  // Namespaces are published in parallel: each is a few round trips, independent of the others.
  private final java.util.concurrent.ExecutorService writers = java.util.concurrent.Executors.newFixedThreadPool(
      Integer.getInteger("ipam.egressip.writers", 8), r -> {
        Thread t = new Thread(r, "egressip-writer");
        t.setDaemon(true);
        return t;
      });
  private InformerEventSource<Namespace, EgressIPAM> namespaces;
  private InformerEventSource<Node, EgressIPAM> nodes;
  private InformerEventSource<IPClaim, EgressIPAM> claims;

  public EgressIPAMReconciler(KubernetesClient client) {
    this(client, Clock.systemUTC(), new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
  }

  public EgressIPAMReconciler(KubernetesClient client, Clock clock, io.micrometer.core.instrument.MeterRegistry registry) {
    this(client, clock, registry, new BareMetalNodeNetwork());
  }

  /**
   * With the platform's {@link NodeNetwork}: bare metal needs no calls; a cloud module attaches the
   * addresses to the nodes' interfaces, reports capacity and the addresses it sees in use.
   */
  public EgressIPAMReconciler(KubernetesClient client, Clock clock, io.micrometer.core.instrument.MeterRegistry registry,
      NodeNetwork nodeNetwork) {
    this(client, clock, registry, NodeNetworks.fixed(nodeNetwork));
  }

  /** With the network chosen per reconcile from the platform (bare metal, EC2 on AWS). */
  public EgressIPAMReconciler(KubernetesClient client, Clock clock, io.micrometer.core.instrument.MeterRegistry registry,
      NodeNetworks networks) {
    this.networks = networks;
    this.client = client;
    this.metrics = new EgressMetrics(registry);
    this.ledger = new ClusterLedger(client);
    this.events = new EventRecorder(client, "egressipam-controller");
    this.detector = new NetworkDetector(client);
    this.clock = clock;
  }

  static String pool(String ipam) {
    return "egressipam/" + ipam;
  }

  static ClaimOwner owner(String namespace) {
    return new ClaimOwner(CONTROLLER, "Namespace", null, namespace, null);
  }

  @Override
  public List<EventSource<?, EgressIPAM>> prepareEventSources(EventSourceContext<EgressIPAM> context) {
    // A namespace maps to the IPAM it names; one that still carries egressips (opted out, moved to
    // another IPAM) maps to every IPAM, so the old one releases what it held.
    namespaces = new InformerEventSource<>(InformerEventSourceConfiguration
        .from(Namespace.class, EgressIPAM.class)
        .withSecondaryToPrimaryMapper(ns -> {
          Map<String, String> a = annotations(ns);
          Set<ResourceID> ids = new HashSet<>();
          if (a.containsKey(EgressAnnotations.EGRESSIPAM)) {
            ids.add(new ResourceID(a.get(EgressAnnotations.EGRESSIPAM)));
          }
          if (a.containsKey(EgressAnnotations.EGRESSIPS)) {
            ids.addAll(allIpams(context));
          }
          return ids;
        }).build(), context);
    nodes = new InformerEventSource<>(InformerEventSourceConfiguration.from(Node.class, EgressIPAM.class)
        .withSecondaryToPrimaryMapper(n -> allIpams(context)).build(), context);
    claims = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPClaim.class, EgressIPAM.class)
        .withSecondaryToPrimaryMapper(c -> {
          String p = c.getSpec() == null ? "" : c.getSpec().pool();
          return p.startsWith("egressipam/") ? Set.of(new ResourceID(p.substring("egressipam/".length())))
              : allIpams(context); // another controller's claim may free or take our addresses
        }).build(), context);
    List<EventSource<?, EgressIPAM>> sources = new ArrayList<>(List.of(namespaces, nodes, claims));
    // The network's own objects, where the cluster serves them, so a hand edit or another tool's
    // write is repaired at once rather than at the next resync. Our own writes come back as events
    // too; they end in a reconcile that finds nothing to do.
    try {
      if (client.supports(HostSubnet.class)) {
        sources.add(new InformerEventSource<>(InformerEventSourceConfiguration
            .from(HostSubnet.class, EgressIPAM.class).withSecondaryToPrimaryMapper(h -> allIpams(context))
            .withOnUpdateFilter((now, before) -> !java.util.Objects.equals(now.getEgressIPs(), before.getEgressIPs())
                || !java.util.Objects.equals(now.getEgressCIDRs(), before.getEgressCIDRs()))
            .build(), context));
        sources.add(new InformerEventSource<>(InformerEventSourceConfiguration
            .from(NetNamespace.class, EgressIPAM.class).withSecondaryToPrimaryMapper(n -> allIpams(context))
            .withOnUpdateFilter((now, before) -> !java.util.Objects.equals(now.getEgressIPs(), before.getEgressIPs()))
            .build(), context));
      }
    } catch (RuntimeException e) {
      LOG.warn("cannot tell whether OpenShift SDN's APIs are served; its objects are checked at each resync: {}",
          e.getMessage());
    }
    return sources;
  }

  private static Set<ResourceID> allIpams(EventSourceContext<EgressIPAM> context) {
    return context.getPrimaryCache().list().map(ResourceID::fromResource).collect(Collectors.toSet());
  }

  private static Map<String, String> annotations(HasMetadata o) {
    return o.getMetadata().getAnnotations() == null ? Map.of() : o.getMetadata().getAnnotations();
  }

  @Override
  public UpdateControl<EgressIPAM> reconcile(EgressIPAM ipam, Context<EgressIPAM> context) {
    String name = ipam.getMetadata().getName();
    dropLegacyFinalizer(ipam);
    NetworkType network = detector.detect();
    Platform platform = Platform.detect(client, platformOverride);
    NodeNetworks.Selection selection = networks.select(platform);
    NodeNetwork nodeNetwork = selection.network().configuredBy(annotations(ipam));
    boolean cloudWithoutModule = platform.needsCloudApi() && !nodeNetwork.capabilities().requiresApiCalls();
    List<Namespace> opted = namespaces.list(ns -> name.equals(annotations(ns).get(EgressAnnotations.EGRESSIPAM))).toList();
    Map<String, Namespace> byName = new HashMap<>();
    namespaces.list(ns -> true).forEach(ns -> byName.put(ns.getMetadata().getName(), ns));
    List<NamespaceState> wanting = opted.stream().filter(ns -> ns.getMetadata().getDeletionTimestamp() == null)
        .map(ns -> new NamespaceState(ns.getMetadata().getName(), ns.getMetadata().getUid(),
            annotations(ns).get(EgressAnnotations.EGRESSIPS))).toList();

    Map<Ip, IPClaim> ourClaims = new HashMap<>();
    // Addresses of EgressIPAMs named before this one: they use the capacity of the nodes that carry them.
    // Only those named before, so two IPAMs that place on one node at once settle in one round
    // (the earlier name keeps its placement, the later one moves) instead of both moving away.
    Set<Ip> otherIpams = new HashSet<>();
    List<ClaimState> claimStates = new ArrayList<>();
    for (IPClaim c : claims.list(c -> true).toList()) {
      Ip ip;
      try {
        ip = Ip.parse(c.getSpec().address());
      } catch (RuntimeException e) {
        continue;
      }
      boolean ours = pool(name).equals(c.getSpec().pool());
      Map<String, String> labels = c.getMetadata().getLabels() == null ? Map.of() : c.getMetadata().getLabels();
      Instant created = c.getMetadata().getCreationTimestamp() == null ? null
          : Instant.parse(c.getMetadata().getCreationTimestamp());
      if (ours) {
        ourClaims.put(ip, c);
        claimStates.add(new ClaimState(ip, c.getSpec().owner().name(), null,
            "true".equals(labels.get(LABEL_PUBLISHED)), created));
      } else {
        claimStates.add(new ClaimState(ip, null, c.getSpec().owner().describe(), false, created));
        String pool = c.getSpec().pool();
        if (pool != null && pool.startsWith(pool("")) && pool.compareTo(pool(name)) < 0) {
          otherIpams.add(ip);
        }
      }
    }

    SdnWriter sdn = new SdnWriter(client);
    Map<String, Set<Ip>> hosting = network == NetworkType.OPENSHIFT_SDN ? sdn.hosting() : Map.of();
    Map<String, Ip> hostIps = network == NetworkType.OPENSHIFT_SDN ? sdn.hostIps() : Map.of();
    Duration grace = Duration.ofSeconds(ipam.getSpec().failoverGraceSeconds() == null ? 10
        : ipam.getSpec().failoverGraceSeconds());
    FailoverPolicy failover = new FailoverPolicy(grace, Duration.ofSeconds(60));
    List<HealthObservation> health = new ArrayList<>();
    List<Node> allNodes = nodes.list(n -> true).toList();
    for (Node n : allNodes) {
      // A node's Ready condition only tells its latest transition: the failure before a recovery
      // is remembered here, so a recovered node waits out the recovery window before taking new
      // addresses (a flapping node's addresses move at most once per window).
      Instant failedAt = failedNodes.get(n.getMetadata().getName());
      if (failedAt != null) {
        health.add(new HealthObservation(n.getMetadata().getName(), failedAt.minus(grace), false));
      }
      health.add(readiness(n));
    }
    Instant now = clock.instant();
    Map<String, NodeVerdict> verdicts = failover.evaluate(health, now);
    verdicts.forEach((node, v) -> {
      if (v.condition() == org.ipamoperators.core.failover.NodeCondition.FAILED) {
        failedNodes.putIfAbsent(node, v.since());
      } else if (v.condition() == org.ipamoperators.core.failover.NodeCondition.HEALTHY) {
        failedNodes.remove(node);
      }
    });
    failedNodes.keySet().retainAll(verdicts.keySet());
    List<NodeInfo> nodeInfos = new ArrayList<>();
    List<String> platformProblems = new ArrayList<>();
    Set<Ip> attached = new HashSet<>(); // our claimed addresses on some node's interface now
    Set<Ip> onInterfaces = new HashSet<>(); // every secondary address on the nodes' interfaces
    List<IpRange> ourRanges = parsableCidrs(ipam);
    for (Node n : allNodes) {
      String nodeName = n.getMetadata().getName();
      Map<String, String> labels = n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels();
      boolean selected = LabelSelectors.matches(ipam.getSpec().nodeSelector(), labels);
      Set<Ip> primary = new HashSet<>(addresses(n));
      if (hostIps.containsKey(nodeName)) {
        primary.add(hostIps.get(nodeName));
      }
      NodeVerdict verdict = verdicts.get(nodeName);
      boolean eligible = !verdict.failed();
      int capacity = capacity(n, ipam);
      Set<Ip> hosted = hosting.getOrDefault(nodeName, Set.of());
      Set<Ip> onNode = hosted; // every egress address the node carries, whichever IPAM placed it
      String providerId = n.getSpec() == null ? null : n.getSpec().getProviderID();
      if (nodeNetwork.capabilities().requiresApiCalls()) {
        // On a cloud the interface is the truth of what a node hosts: our claimed addresses on it.
        // Unselected nodes are looked at too, so what they still hold is taken off them.
        hosted = Set.of();
        if (selected || providerId != null) {
          try {
            NodeAttachment a = nodeNetwork.describe(new NodeRef(nodeName, providerId, labels, new ArrayList<>(primary)));
            if (nodeNetwork.capabilities().reportsCapacity()) {
              capacity = Math.min(capacity, a.capacity());
            }
            hosted = a.secondaryAddresses().stream().filter(ourClaims::containsKey)
                .filter(ip -> ourRanges.stream().anyMatch(r -> r.contains(ip))).collect(Collectors.toSet());
            attached.addAll(hosted);
            onInterfaces.addAll(a.secondaryAddresses());
            onNode = Set.copyOf(a.secondaryAddresses());
          } catch (NodeNetworkException e) {
            // A node the platform cannot describe hosts nothing new; its addresses move elsewhere.
            eligible = false;
            if (selected) {
              platformProblems.add(e.getMessage());
            }
          }
        }
      }
      // A node's capacity is shared by every EgressIPAM that selects it: what an IPAM named before
      // this one placed there is not free for this one.
      long othersHere = onNode.stream().filter(otherIpams::contains).count();
      if (capacity != NodeState.UNLIMITED) {
        capacity = (int) Math.max(0, capacity - othersHere);
      }
      if (verdict.condition() == org.ipamoperators.core.failover.NodeCondition.SUSPECT) {
        // Not ready, within the grace period: it keeps what it hosts and takes nothing new.
        long ours = hosted.stream().filter(ip -> ourRanges.stream().anyMatch(r -> r.contains(ip))).count();
        capacity = (int) Math.min(capacity, ours);
      }
      nodeInfos.add(new NodeInfo(nodeName, labels.get(ipam.getSpec().topologyLabel()), selected,
          eligible, capacity, primary, hosted));
    }
    // CIDRs whose addresses in use could not be discovered: nothing new is claimed in them.
    List<IpRange> blind = new ArrayList<>();
    if (nodeNetwork.capabilities().seesForeignAddresses()) {
      Set<Ip> annotated = new HashSet<>();
      for (NamespaceState w : wanting) {
        if (w.egressIps() != null) {
          for (String part : w.egressIps().split(",")) {
            try {
              annotated.add(Ip.parse(part.trim()));
            } catch (RuntimeException e) {
              // reported by the planner
            }
          }
        }
      }
      for (CIDRAssignment c : ipam.getSpec().cidrs()) {
        try {
          for (Ip ip : nodeNetwork.addressesInUse(IpRange.parse(c.cidr()))) {
            if (ourClaims.containsKey(ip)) {
              continue; // attached by us: in use, and ours
            }
            if (onInterfaces.contains(ip) && annotated.contains(ip)) {
              continue; // on a node and named by one of our namespaces: the old operator's, taken over
            }
            claimStates.add(new ClaimState(ip, null, "the platform (in use in subnet " + c.cidr() + ")", false, null));
          }
        } catch (NodeNetworkException e) {
          platformProblems.add(e.getMessage());
          blind.add(IpRange.parse(c.cidr()));
        } catch (RuntimeException e) {
          // an unparsable CIDR is reported by the spec check below
        }
      }
    }

    EgressPlan plan = EgressPlanner.plan(ipam.getSpec(), wanting, claimStates, nodeInfos, PlacementOptions.DEFAULT);
    if (!plan.specValid()) {
      String message = plan.specProblems().stream().map(p -> p.message()).collect(Collectors.joining("; "));
      events.warning(ipam, "InvalidSpec", message);
      return UpdateControl.patchStatus(status(ipam, network, platform, plan, false, "InvalidSpec", message, List.of()));
    }

    // 1. Release what this IPAM no longer needs (before claiming: a freed address may be reused now).
    Set<String> cleared = new HashSet<>();
    List<Ip> releaseAfterDetach = new ArrayList<>();
    for (Ip ip : plan.toRelease()) {
      IPClaim c = ourClaims.get(ip);
      String ns = c.getSpec().owner().name();
      if (attached.contains(ip)) {
        // Still on a node's interface: the claim stays until the cloud has let go of it, so a
        // failed detach is retried rather than leaving an address nobody accounts for.
        releaseAfterDetach.add(ip);
      } else {
        ledger.release(ip, c.getSpec().owner());
      }
      if (!plan.served().containsKey(ns) && byName.containsKey(ns)) {
        cleared.add(ns);
      }
    }
    // 2 and 3. Per namespace, in parallel (namespaces are independent): claim all its addresses or
    // none, publish them in the annotation, mark the claims published.
    Map<String, String> seen = new HashMap<>();
    wanting.forEach(w -> seen.put(w.name(), w.egressIps()));
    Map<String, List<Ip>> served = new java.util.concurrent.ConcurrentSkipListMap<>(plan.served());
    java.util.concurrent.atomic.AtomicBoolean retryFlag = new java.util.concurrent.atomic.AtomicBoolean();
    List<java.util.concurrent.Callable<Void>> tasks = new ArrayList<>();
    boolean discoveryRetry = false;
    for (String ns : plan.served().keySet()) {
      List<Ip> toClaim = plan.toClaim().getOrDefault(ns, List.of());
      java.util.Optional<IpRange> unknown = blind.stream()
          .filter(r -> toClaim.stream().anyMatch(r::contains)).findFirst();
      if (unknown.isPresent()) {
        // An address is only new once the platform said what is in use: wait, never guess.
        served.remove(ns);
        discoveryRetry = true;
        Namespace n = byName.get(ns);
        if (n != null) {
          events.warning(n, "EgressIPPending", "the addresses in use in " + unknown.get()
              + " could not be discovered; " + toClaim + " will be claimed once they are");
        }
        continue;
      }
      tasks.add(() -> {
        if (!claimAndPublish(name, ns, plan, seen.get(ns), ourClaims, byName)) {
          served.remove(ns);
          retryFlag.set(true);
        }
        return null;
      });
    }
    try {
      for (var f : writers.invokeAll(tasks)) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while publishing addresses", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
    boolean retry = retryFlag.get();
    // Namespaces that left this IPAM lose the annotation this IPAM wrote.
    for (String ns : cleared) {
      Namespace n = byName.get(ns);
      if (n != null && !name.equals(annotations(n).get(EgressAnnotations.EGRESSIPAM))
          && annotations(n).containsKey(EgressAnnotations.EGRESSIPS)) {
        removeAnnotation(ns, ipam);
      }
    }
    // 4. The platform (attach to interfaces: a no-op on bare metal), then the cluster network.
    List<String> failures = new ArrayList<>(platformProblems);
    Set<Ip> servedIps = new HashSet<>();
    served.values().forEach(servedIps::addAll);
    List<AddressChange> changes = new ArrayList<>(AddressChange.of(plan.placement()).stream()
        .filter(c -> c.kind() == AddressChange.Kind.DETACH || servedIps.contains(c.address())).toList());
    if (nodeNetwork.capabilities().requiresApiCalls()) {
      // Addresses that stay where they are are confirmed too: no call where the interface already
      // holds them as ours; one attached by the old operator (untagged) is adopted where it is.
      Set<Ip> changing = changes.stream().map(AddressChange::address).collect(Collectors.toSet());
      plan.placement().assignments().forEach((node, ips) -> ips.stream()
          .filter(ip -> servedIps.contains(ip) && !changing.contains(ip))
          .forEach(ip -> changes.add(AddressChange.attach(ip, node))));
    }
    Set<Ip> detachFailed = new HashSet<>();
    List<String> cloudFailures = new ArrayList<>();
    boolean cloudRetry = false;
    for (AddressChangeResult r : changes.isEmpty() ? List.<AddressChangeResult>of() : nodeNetwork.apply(changes)) {
      if (r.outcome() == AddressChangeResult.Outcome.FAILED) {
        if (r.change().kind() == AddressChange.Kind.DETACH) {
          detachFailed.add(r.change().address());
        }
        cloudRetry |= r.retryable();
        cloudFailures.add(r.change().kind() + " " + r.change().address() + " on "
            + (r.change().toNode() != null ? r.change().toNode() : r.change().fromNode()) + ": "
            + r.message() + (r.errorCode() == null ? "" : " (" + r.errorCode() + ")"));
      }
    }
    for (Ip ip : releaseAfterDetach) {
      if (!detachFailed.contains(ip)) {
        ledger.release(ip, ourClaims.get(ip).getSpec().owner());
      }
    }
    if (!cloudFailures.isEmpty()) {
      failures.addAll(cloudFailures);
    }
    if (!platformProblems.isEmpty() || !cloudFailures.isEmpty()) {
      // One Event per distinct message (the recorder counts repeats): which call, node and code.
      List<String> all = new ArrayList<>(platformProblems);
      all.addAll(cloudFailures);
      events.warning(ipam, "CloudCallFailed", String.join("; ", all));
    }
    failures.addAll(writeNetwork(ipam, network, plan, served, cleared, nodeInfos, platform));
    if (cloudWithoutModule) {
      failures.add("platform " + platform.type() + " needs its cloud module to attach egress IPs to the nodes' "
          + "interfaces, and none is configured" + (selection.problem() == null ? "" : " (" + selection.problem() + ")")
          + ": the addresses are allocated and written to the cluster network, but the cloud will not route them");
    }
    // 5. Report.
    recordMetrics(ipam, plan, nodeInfos, verdicts, served, now);
    for (NamespaceProblem p : plan.problems()) {
      Namespace n = byName.get(p.namespace());
      if (n != null) {
        events.warning(n, p.rejected() ? "EgressIPRejected" : "EgressIPPending", p.message());
      }
    }
    for (Unplaceable u : plan.placement().unplaceable()) {
      Namespace n = byName.get(u.owner());
      if (n != null) {
        events.warning(n, "EgressIPUnplaceable", u.message());
      }
    }
    boolean ok = failures.isEmpty() && network != NetworkType.NONE;
    String reason = network == NetworkType.NONE ? "UnsupportedNetwork"
        : failures.isEmpty() ? "Reconciled" : "NetworkWriteFailed";
    String message = network == NetworkType.NONE
        ? "neither OpenShift SDN (HostSubnet) nor OVN-Kubernetes (EgressIP) is served by this cluster; addresses are allocated but not configured"
        : failures.isEmpty() ? selection.description() : String.join("; ", failures);
    EgressIPAM patch = status(ipam, network, platform, plan, ok, reason, message, failures);
    Duration next = nextReview(verdicts, now);
    if (retry) {
      next = RETRY_SOON;
    } else if ((cloudRetry || discoveryRetry) && (next == null || next.compareTo(CLOUD_RETRY) > 0)) {
      next = CLOUD_RETRY; // throttled or 5xx after the SDK's own retries: again a little later
    }
    UpdateControl<EgressIPAM> control = UpdateControl.patchStatus(patch);
    return next == null ? control : control.rescheduleAfter(next);
  }

  /**
   * Claims a namespace's missing addresses (all or none), publishes them with a compare-and-swap
   * on its annotation and marks the claims published. False when it must be retried.
   */
  private boolean claimAndPublish(String ipam, String ns, EgressPlan plan, String expected,
      Map<Ip, IPClaim> ourClaims, Map<String, Namespace> byName) {
    List<Ip> toClaim = plan.toClaim().getOrDefault(ns, List.of());
    boolean manual = expected != null && !expected.isBlank();
    List<Ip> got = new ArrayList<>();
    for (Ip ip : toClaim) {
      ClaimResult r = ledger.claim(ip, pool(ipam), owner(ns), Map.of(LABEL_ORIGIN, manual ? "manual" : "allocated"));
      if (!r.ours()) {
        got.forEach(g -> ledger.release(g, owner(ns)));
        Namespace n = byName.get(ns);
        if (n != null) {
          events.warning(n, "AddressTaken", ip + " was claimed by " + r.holder().describe()
              + " first; another address will be chosen");
        }
        return false;
      }
      got.add(ip);
    }
    String value = plan.annotations().get(ns);
    if (value != null && !annotate(ns, ipam, expected, value)) {
      return false; // someone else wrote first: the next reconcile starts from their value
    }
    boolean ok = true;
    for (Ip ip : plan.served().get(ns)) {
      IPClaim c = ourClaims.get(ip);
      boolean published = c != null && c.getMetadata().getLabels() != null
          && "true".equals(c.getMetadata().getLabels().get(LABEL_PUBLISHED));
      if (!published) {
        try {
          ledger.label(ip, LABEL_PUBLISHED, "true");
        } catch (KubernetesClientException ex) {
          ok = false;
        }
      }
    }
    return ok;
  }

  private void recordMetrics(EgressIPAM ipam, EgressPlan plan, List<NodeInfo> nodeInfos,
      Map<String, NodeVerdict> verdicts, Map<String, List<Ip>> served, Instant now) {
    String name = ipam.getMetadata().getName();
    EgressMetrics.Round round = metrics.round(name);
    Set<String> labelValues = ipam.getSpec().cidrs().stream().map(CIDRAssignment::labelValue)
        .collect(Collectors.toSet());
    for (NodeInfo n : nodeInfos) {
      if (!n.selected() || n.topologyValue() == null || !labelValues.contains(n.topologyValue())) {
        continue;
      }
      double capacity = n.capacity() == NodeState.UNLIMITED ? Double.POSITIVE_INFINITY : n.capacity() + 1;
      round.gauge("egressip_ip_capacity", "Egress IPs a node can hold, its own address included",
          capacity, "node", n.name());
      int hosted = plan.placement().assignments().getOrDefault(n.name(), new java.util.TreeSet<>()).size();
      round.gauge("egressip_ip_allocated", "Egress IPs placed on a node, its own address included",
          hosted + 1, "node", n.name());
    }
    for (EgressPlan.CidrUsage u : plan.usage()) {
      round.gauge("egressip_cidr_capacity", "Usable addresses of a CIDR", u.capacity().doubleValue(), "cidr", u.cidr());
      round.gauge("egressip_cidr_allocated", "Addresses of a CIDR held by namespaces", u.allocated().doubleValue(), "cidr", u.cidr());
      round.gauge("egressip_cidr_free", "Free addresses of a CIDR", u.free().doubleValue(), "cidr", u.cidr());
    }
    long rejected = plan.problems().stream().filter(NamespaceProblem::rejected).count();
    round.gauge("egressip_namespaces", "Opted-in namespaces by state", served.size(), "state", "assigned");
    round.gauge("egressip_namespaces", "Opted-in namespaces by state", plan.problems().size() - rejected, "state", "pending");
    round.gauge("egressip_namespaces", "Opted-in namespaces by state", rejected, "state", "rejected");
    round.gauge("egressip_unplaceable_ips", "Addresses no node can host now", plan.placement().unplaceable().size());
    round.close();
    for (var change : plan.placement().changes(org.ipamoperators.core.placement.Change.Kind.MOVE)) {
      NodeVerdict v = verdicts.get(change.from());
      if (v != null && v.failed()) {
        metrics.failover(name, Duration.between(v.since(), now));
      }
    }
  }

  private static Duration nextReview(Map<String, NodeVerdict> verdicts, Instant now) {
    Instant soonest = null;
    for (NodeVerdict v : verdicts.values()) {
      if (v.reviewAt() != null && (soonest == null || v.reviewAt().isBefore(soonest))) {
        soonest = v.reviewAt();
      }
    }
    if (soonest == null) {
      return null;
    }
    Duration d = Duration.between(now, soonest).plusMillis(200);
    return d.isNegative() ? Duration.ofMillis(200) : d;
  }

  private List<String> writeNetwork(EgressIPAM ipam, NetworkType network, EgressPlan plan,
      Map<String, List<Ip>> served, Set<String> cleared, List<NodeInfo> nodeInfos, Platform platform) {
    List<CIDRAssignment> cidrs = ipam.getSpec().cidrs();
    List<IpRange> ranges = cidrs.stream().map(c -> IpRange.parse(c.cidr())).toList();
    Set<String> labelValues = cidrs.stream().map(CIDRAssignment::labelValue).collect(Collectors.toSet());
    Map<String, Set<Ip>> hosting = new HashMap<>();
    Map<String, IpRange> cidrMode = new HashMap<>();
    Set<String> assignable = new HashSet<>();
    Set<Ip> servedIps = new HashSet<>();
    served.values().forEach(servedIps::addAll);
    // One CIDR without a cloud: SDN picks the node itself from egressCIDRs, as the old operator did.
    // On a cloud the node must be chosen here, since the address is attached to its interface.
    boolean useCidrMode = cidrs.size() == 1 && ranges.get(0).first().isIPv4() && !platform.needsCloudApi();
    for (NodeInfo n : nodeInfos) {
      boolean member = n.selected() && n.topologyValue() != null && labelValues.contains(n.topologyValue());
      if (member) {
        assignable.add(n.name());
        if (useCidrMode) {
          cidrMode.put(n.name(), ranges.get(0));
        }
      }
    }
    if (!useCidrMode) {
      plan.placement().assignments().forEach((node, ips) -> hosting.put(node,
          ips.stream().filter(servedIps::contains).collect(Collectors.toSet())));
    }
    NetworkWrite write = new NetworkWrite(ipam.getMetadata().getName(), ranges, served, cleared, hosting,
        cidrMode, assignable);
    return switch (network) {
      case OPENSHIFT_SDN -> new SdnWriter(client).apply(write);
      case OVN_KUBERNETES -> new OvnWriter(client).apply(write);
      case NONE -> List.of();
    };
  }

  private EgressIPAM status(EgressIPAM ipam, NetworkType network, Platform platform, EgressPlan plan, boolean ready,
      String reason,
      String message, List<String> failures) {
    EgressIPAMStatus old = ipam.getStatus();
    Long generation = ipam.getMetadata().getGeneration();
    var conditions = Conditions.set(old == null ? null : old.conditions(), "Ready", ready, reason, message, generation);
    long rejected = plan.problems().stream().filter(NamespaceProblem::rejected).count();
    long pending = plan.problems().size() - rejected;
    int unplaceable = plan.placement().unplaceable().size();
    boolean degraded = rejected > 0 || pending > 0 || unplaceable > 0 || !failures.isEmpty();
    String degradedMessage = degraded ? String.format(
        "%d namespace(s) rejected, %d pending, %d address(es) unplaceable%s", rejected, pending, unplaceable,
        failures.isEmpty() ? "" : ", " + failures.size() + " network write(s) failed") : "";
    conditions = Conditions.set(conditions, "Degraded", degraded,
        degraded ? (rejected > 0 ? "NamespacesRejected" : pending > 0 ? "NamespacesPending"
            : unplaceable > 0 ? "Unplaceable" : "NetworkWriteFailed") : "AsExpected", degradedMessage, generation);
    List<CidrStatus> cidrs = plan.usage().stream().map(u -> new CidrStatus(u.cidr(), u.capacity().toString(),
        u.allocated().toString(), u.free().toString())).toList();
    EgressIPAM patch = new EgressIPAM();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(ipam.getMetadata().getName());
    patch.setMetadata(meta);
    patch.setStatus(new EgressIPAMStatus(conditions, generation, plan.specValid() ? cidrs : null,
        plan.served().size(), (int) pending, (int) rejected, unplaceable, network.display(), platform.type()));
    return patch;
  }

  private static HealthObservation readiness(Node n) {
    List<NodeCondition> conditions = n.getStatus() == null || n.getStatus().getConditions() == null
        ? List.of() : n.getStatus().getConditions();
    for (NodeCondition c : conditions) {
      if ("Ready".equals(c.getType())) {
        Instant at = c.getLastTransitionTime() == null ? Instant.EPOCH : Instant.parse(c.getLastTransitionTime());
        return new HealthObservation(n.getMetadata().getName(), at, "True".equals(c.getStatus()));
      }
    }
    // No Ready condition yet (a node just registered): not ready, since the beginning.
    return new HealthObservation(n.getMetadata().getName(), Instant.EPOCH, false);
  }

  private static Set<Ip> addresses(Node n) {
    Set<Ip> out = new HashSet<>();
    if (n.getStatus() != null && n.getStatus().getAddresses() != null) {
      for (NodeAddress a : n.getStatus().getAddresses()) {
        if ("InternalIP".equals(a.getType()) || "ExternalIP".equals(a.getType())) {
          try {
            out.add(Ip.parse(a.getAddress()));
          } catch (RuntimeException e) {
            // a host name or garbage: nothing to protect
          }
        }
      }
    }
    return out;
  }

  private static int capacity(Node n, EgressIPAM ipam) {
    String a = annotations(n).get(EgressAnnotations.NODE_CAPACITY);
    if (a != null) {
      try {
        return Math.max(0, Integer.parseInt(a.trim()));
      } catch (NumberFormatException e) {
        // fall through to the IPAM's setting; the node annotation is reported nowhere else
      }
    }
    return ipam.getSpec().nodeCapacity() == null ? NodeState.UNLIMITED : ipam.getSpec().nodeCapacity();
  }

  /**
   * Writes egressips as a compare-and-swap: only if the value is still the one the plan was made
   * from (a published address is never overwritten by a replica with an older view), with the
   * namespace's resourceVersion as the lock. False when someone else got there first.
   */
  private boolean annotate(String ns, String ipam, String expected, String value) {
    Namespace fresh = client.namespaces().withName(ns).get();
    if (fresh == null || !ipam.equals(annotations(fresh).get(EgressAnnotations.EGRESSIPAM))) {
      return false;
    }
    String current = annotations(fresh).get(EgressAnnotations.EGRESSIPS);
    if (value.equals(current)) {
      return true;
    }
    if (!java.util.Objects.equals(blankToNull(current), blankToNull(expected))) {
      return false;
    }
    fresh.getMetadata().getAnnotations().put(EgressAnnotations.EGRESSIPS, value);
    try {
      client.resource(fresh).update();
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return false;
      }
      throw e;
    }
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s;
  }

  private void removeAnnotation(String ns, EgressIPAM ipam) {
    try {
      client.namespaces().withName(ns).edit(n -> {
        if (n.getMetadata().getAnnotations() != null) {
          n.getMetadata().getAnnotations().remove(EgressAnnotations.EGRESSIPS);
        }
        return n;
      });
    } catch (KubernetesClientException e) {
      LOG.warn("could not remove {} from namespace {}: {}", EgressAnnotations.EGRESSIPS, ns, e.getMessage());
    }
  }

  private void dropLegacyFinalizer(EgressIPAM ipam) {
    if (ipam.getMetadata().getFinalizers() != null
        && ipam.getMetadata().getFinalizers().contains(EgressAnnotations.LEGACY_FINALIZER)) {
      client.resources(EgressIPAM.class).withName(ipam.getMetadata().getName()).edit(x -> {
        x.getMetadata().getFinalizers().remove(EgressAnnotations.LEGACY_FINALIZER);
        return x;
      });
    }
  }

  /**
   * IPAM deletion: clear what this IPAM wrote (namespace annotations it allocated, the network's
   * entries in its CIDRs) and release its claims. Works from the claims, so an invalid spec never
   * blocks it; manual addresses stay in their namespaces' annotations.
   */
  /** The spec's CIDRs that parse; the spec check reports the others. */
  private static List<IpRange> parsableCidrs(EgressIPAM ipam) {
    List<IpRange> out = new ArrayList<>();
    for (CIDRAssignment c : ipam.getSpec().cidrs()) {
      try {
        out.add(IpRange.parse(c.cidr()));
      } catch (RuntimeException e) {
        // skipped here, reported by EgressPlanner.validate
      }
    }
    return out;
  }

  @Override
  public DeleteControl cleanup(EgressIPAM ipam, Context<EgressIPAM> context) {
    String name = ipam.getMetadata().getName();
    List<IPClaim> held = ledger.claimsOfPool(pool(name));
    Set<String> cleared = new HashSet<>();
    List<IpRange> ranges = new ArrayList<>(parsableCidrs(ipam)); // an invalid CIDR's addresses come from the claims
    for (IPClaim c : held) {
      Ip ip = Ip.parse(c.getSpec().address());
      if (ranges.stream().noneMatch(r -> r.contains(ip))) {
        ranges.add(IpRange.single(ip));
      }
      String ns = c.getSpec().owner().name();
      boolean manual = c.getMetadata().getLabels() != null
          && "manual".equals(c.getMetadata().getLabels().get(LABEL_ORIGIN));
      if (client.namespaces().withName(ns).get() != null) {
        cleared.add(ns);
        if (!manual) {
          removeAnnotation(ns, ipam);
        }
      }
    }
    NetworkType network = detector.detect();
    NetworkWrite write = new NetworkWrite(name, ranges, Map.of(), cleared, Map.of(), Map.of(), Set.of());
    List<String> failures = new ArrayList<>(switch (network) {
      case OPENSHIFT_SDN -> new SdnWriter(client).apply(write);
      case OVN_KUBERNETES -> new OvnWriter(client).apply(write);
      case NONE -> List.<String>of();
    });
    // The cloud: every held address still on a node's interface is detached; a claim whose detach
    // failed is kept (and the finalizer with it) so the next attempt knows what to take off.
    Set<Ip> keep = new HashSet<>();
    NodeNetwork nodeNetwork = networks.select(Platform.detect(client, platformOverride)).network();
    if (nodeNetwork.capabilities().requiresApiCalls()) {
      Set<Ip> heldIps = held.stream().map(c -> Ip.parse(c.getSpec().address())).collect(Collectors.toSet());
      List<AddressChange> detach = new ArrayList<>();
      for (Node n : client.nodes().list().getItems()) {
        String providerId = n.getSpec() == null ? null : n.getSpec().getProviderID();
        if (providerId == null) {
          continue;
        }
        Map<String, String> labels = n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels();
        try {
          NodeAttachment a = nodeNetwork.describe(new NodeRef(n.getMetadata().getName(), providerId, labels,
              new ArrayList<>(addresses(n))));
          a.secondaryAddresses().stream().filter(heldIps::contains)
              .forEach(ip -> detach.add(AddressChange.detach(ip, n.getMetadata().getName())));
        } catch (NodeNetworkException e) {
          // gone with its instance, or not ours to look at: nothing of ours can be taken off it
          LOG.debug("IPAM {} cleanup: {}", name, e.getMessage());
        }
      }
      for (AddressChangeResult r : detach.isEmpty() ? List.<AddressChangeResult>of() : nodeNetwork.apply(detach)) {
        if (r.outcome() == AddressChangeResult.Outcome.FAILED) {
          keep.add(r.change().address());
          failures.add("DETACH " + r.change().address() + " on " + r.change().fromNode() + ": " + r.message()
              + (r.errorCode() == null ? "" : " (" + r.errorCode() + ")"));
        }
      }
    }
    for (IPClaim c : held) {
      Ip ip = Ip.parse(c.getSpec().address());
      if (!keep.contains(ip)) {
        ledger.release(ip, c.getSpec().owner());
      }
    }
    metrics.forget(name);
    if (!failures.isEmpty()) {
      events.warning(ipam, "CleanupIncomplete", String.join("; ", failures));
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(Duration.ofSeconds(10));
    }
    return DeleteControl.defaultDelete();
  }
}
