package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
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
import io.javaoperatorsdk.operator.processing.GroupVersionKind;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.ipamoperators.cloud.baremetal.BareMetalNodeNetwork;
import org.ipamoperators.controller.common.kube.Conditions;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.ledger.BlockClaim;
import org.ipamoperators.controller.common.ledger.BlockLedger;
import org.ipamoperators.controller.common.ledger.BlockRequest;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPBlockEntry;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.failover.NodeVerdict;
import org.ipamoperators.core.placement.Change;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.placement.Unplaceable;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NetworkCapabilities;
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
import org.ipamoperators.egressip.plan.NodeInfo;
import org.ipamoperators.egressip.plan.Orphans;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles one EgressIPAM in three steps: fetch (informer caches, plus our own writes the
 * informers have not shown yet, plus the platform's description of the nodes), decide
 * ({@link EgressPolicy#decide}, pure), persist in an order that can be cut off anywhere and resumed:
 * release, claim, publish in the namespace annotation, attach on the platform, write the network,
 * report. Every namespace's problem stays with that namespace.
 *
 * <p>Cost follows change: reads come from informers that keep only the fields used, a namespace
 * is looked up by an index on its egressipam annotation, a claim is parsed once per version, Node
 * heartbeats do not trigger a pass, and only objects whose content changes are written.
 */
@ControllerConfiguration(name = "egressipam", finalizerName = EgressAnnotations.FINALIZER,
    maxReconciliationInterval = @MaxReconciliationInterval(interval = 5, timeUnit = TimeUnit.MINUTES))
public class EgressIPAMReconciler implements Reconciler<EgressIPAM>, Cleaner<EgressIPAM> {
  static final String CONTROLLER = "egressip";
  /** The label older versions wrote on a claim once published; still read, no longer written. */
  static final String LABEL_PUBLISHED = EgressFacts.LABEL_PUBLISHED;
  static final String LABEL_ORIGIN = "ipam.ipamoperators.org/origin";
  private static final Logger LOG = LoggerFactory.getLogger(EgressIPAMReconciler.class);
  private static final Duration CLOUD_RETRY = Duration.ofSeconds(10);
  private static final String BY_IPAM = "egressipam";
  private static final String BY_EGRESS_IP = "egressip";

  private final KubernetesClient client;
  private final ClusterLedger ledger;
  private final BlockLedger blockLedger;
  private final EventRecorder events;
  private final NetworkDetector detector;
  private final Platform.Known platforms;
  private final Clock clock;
  private final EgressMetrics metrics;
  private final NodeNetworks networks;
  // When each node last counted as failed, per IPAM: a timing hint, not allocation state (lost on
  // restart, which at worst lets a flapping node take addresses once more).
  private final Map<String, Map<String, Instant>> failureHistory = new ConcurrentHashMap<>();
  // The previous pass's plan per IPAM, so the next one decides again only what changed. A cache:
  // empty after a restart (the first pass plans in full), and every FULL_CHECK a pass also plans
  // in full and compares; the ledger, not this, is what keeps an address to one owner.
  private final Map<String, EgressPlanner.Memory> plans = new ConcurrentHashMap<>();
  private final Map<String, Instant> lastFullPlan = new ConcurrentHashMap<>();
  // Orphans seen by the previous passes, per IPAM: memory only; after a restart the grace starts
  // over, which only delays a take-off (see Orphans).
  private final Map<String, Orphans.Watch> orphanWatch = new ConcurrentHashMap<>();
  // Who attached in the previous pass, per IPAM: only so the Event telling it is left to OpenShift
  // comes once per change (again after a restart), not every pass.
  private final Map<String, CloudAttachment> attachmentTold = new ConcurrentHashMap<>();
  private final RetryBackoff backoff = new RetryBackoff(Duration.ofSeconds(2), Duration.ofMinutes(1));
  private volatile Orphans.Grace orphanGrace = new Orphans.Grace(
      Duration.ofSeconds(Long.getLong("ipam.egressip.orphanGraceSeconds", 30)),
      Integer.getInteger("ipam.egressip.orphanGracePasses", 2));
  private static final Duration FULL_CHECK = Duration.ofSeconds(Long.getLong("ipam.egressip.fullPlanSeconds", 300));
  // Off: every pass plans in full (how passes cost before; kept to measure against).
  private static final boolean INCREMENTAL = !"false".equals(System.getProperty("ipam.egressip.incremental"));
  // Namespaces are published in parallel: each is a few round trips, independent of the others.
  private final ExecutorService writers = Executors.newFixedThreadPool(
      Integer.getInteger("ipam.egressip.writers", 8), r -> {
        Thread t = new Thread(r, "egressip-writer");
        t.setDaemon(true);
        return t;
      });
  private final RecentWrites<Namespace> namespacesWritten = new RecentWrites<>(Trimmed::namespace);
  private final RecentWrites<IPClaim> claimsWritten = new RecentWrites<>(Trimmed::claim);
  private final RecentWrites<IPBlock> blocksWritten = new RecentWrites<>(Trimmed::block);
  private final RecentWrites<HostSubnet> hostSubnetsWritten = new RecentWrites<>(Trimmed::hostSubnet);
  private final RecentWrites<NetNamespace> netNamespacesWritten = new RecentWrites<>(Trimmed::netNamespace);
  private final RecentWrites<GenericKubernetesResource> egressIpsWritten = new RecentWrites<>(OvnWriter::trimmed);
  private final Map<String, ParsedClaim> parsed = new ConcurrentHashMap<>();
  private final Map<String, ParsedBlock> parsedBlocks = new ConcurrentHashMap<>();
  private final Map<String, ParsedSubnet> parsedSubnets = new ConcurrentHashMap<>();
  private DanglingReferences dangling;
  private InformerEventSource<Namespace, EgressIPAM> namespaces;
  private InformerEventSource<Node, EgressIPAM> nodes;
  private InformerEventSource<IPClaim, EgressIPAM> claims;
  private InformerEventSource<IPBlock, EgressIPAM> blocks;
  private InformerEventSource<HostSubnet, EgressIPAM> hostSubnets;
  private InformerEventSource<NetNamespace, EgressIPAM> netNamespaces;
  private InformerEventSource<GenericKubernetesResource, EgressIPAM> egressIps;

  /** A claim parsed once per resourceVersion; {@code fact} null when its address does not parse. */
  private record ParsedClaim(String version, ClaimFact fact) {}

  /** A block's entries parsed once per resourceVersion. */
  private record ParsedBlock(String version, List<ClaimFact> facts) {}

  /** A HostSubnet's egress IPs and host address parsed once per resourceVersion. */
  private record ParsedSubnet(String version, Set<Ip> hosting, Ip hostIp) {}

  /**
   * An address this IPAM holds: by an entry of its block (how this controller claims), or by an
   * IPClaim an older version made ({@code claim}; honoured as it is, deleted when released).
   */
  private record Held(Ip ip, String namespace, boolean manual, IPClaim claim) {}

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
    this.networks = networks;
    this.client = client;
    this.metrics = new EgressMetrics(registry);
    this.ledger = new ClusterLedger(client);
    this.blockLedger = new BlockLedger(client, blocksWritten::wrote);
    this.events = new EventRecorder(client, "egressipam-controller");
    this.detector = new NetworkDetector(client);
    this.platforms = new Platform.Known(client, System.getProperty("ipam.platform", System.getenv("IPAM_PLATFORM")));
    this.clock = clock;
  }

  /**
   * How long an orphan (see {@link Orphans}) must be seen before it is taken off: at least two
   * passes and {@code minimum}; by default 30 s (system properties {@code
   * ipam.egressip.orphanGraceSeconds}, {@code ipam.egressip.orphanGracePasses}).
   */
  public EgressIPAMReconciler orphanGrace(Duration minimum, int passes) {
    this.orphanGrace = new Orphans.Grace(minimum, passes);
    orphanWatch.clear();
    return this;
  }

  static String pool(String ipam) {
    return EgressPolicy.pool(ipam);
  }

  static ClaimOwner owner(String namespace) {
    return new ClaimOwner(CONTROLLER, "Namespace", null, namespace, null);
  }

  @Override
  public List<EventSource<?, EgressIPAM>> prepareEventSources(EventSourceContext<EgressIPAM> context) {
    dangling = new DanglingReferences(events, this::namespace,
        ipam -> context.getPrimaryCache().get(new ResourceID(ipam)).isPresent());
    // A namespace maps to the IPAM it names; one that still carries egressips (opted out, moved to
    // another IPAM) maps to every IPAM, so the old one releases what it held. Only changes of our
    // annotations or of its deletion matter.
    namespaces = new InformerEventSource<>(InformerEventSourceConfiguration
        .from(Namespace.class, EgressIPAM.class)
        .withItemStore(new TransformingItemStore<>(Trimmed::namespace))
        .withOnUpdateFilter(Trimmed::namespaceChanged)
        .withSecondaryToPrimaryMapper(ns -> {
          Map<String, String> a = annotations(ns);
          Set<ResourceID> ids = new HashSet<>();
          if (a.containsKey(EgressAnnotations.EGRESSIPAM)) {
            String ipam = a.get(EgressAnnotations.EGRESSIPAM);
            ids.add(new ResourceID(ipam));
            if (ns.getMetadata().getDeletionTimestamp() == null) {
              dangling.seen(ns.getMetadata().getName(), ipam);
            }
          }
          if (a.containsKey(EgressAnnotations.EGRESSIPS)) {
            ids.addAll(allIpams(context));
          }
          return ids;
        }).build(), context);
    namespaces.addIndexers(Map.of(BY_IPAM, ns -> {
      String ipam = annotations(ns).get(EgressAnnotations.EGRESSIPAM);
      return ipam == null ? List.of() : List.of(ipam);
    }));
    // Node heartbeats change nothing the policy reads (review H5).
    nodes = new InformerEventSource<>(InformerEventSourceConfiguration.from(Node.class, EgressIPAM.class)
        .withItemStore(new TransformingItemStore<>(Trimmed::node))
        .withOnUpdateFilter(Trimmed::nodeChanged)
        .withSecondaryToPrimaryMapper(n -> allIpams(context)).build(), context);
    claims = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPClaim.class, EgressIPAM.class)
        .withItemStore(new TransformingItemStore<>(Trimmed::claim))
        .withSecondaryToPrimaryMapper(c -> {
          String p = c.getSpec() == null || c.getSpec().pool() == null ? "" : c.getSpec().pool();
          return p.startsWith(EgressPolicy.POOL_PREFIX)
              ? Set.of(new ResourceID(p.substring(EgressPolicy.POOL_PREFIX.length())))
              : allIpams(context); // another controller's claim may free or take our addresses
        }).build(), context);
    // Blocks: the IPAMs whose pools have entries in it; one with another owner's entry concerns all.
    blocks = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPBlock.class, EgressIPAM.class)
        .withItemStore(new TransformingItemStore<>(Trimmed::block))
        .withSecondaryToPrimaryMapper(b -> {
          Set<ResourceID> ids = new HashSet<>();
          for (IPBlockEntry e : b.entries().values()) {
            String p = e == null || e.pool() == null ? "" : e.pool();
            if (!p.startsWith(EgressPolicy.POOL_PREFIX)) {
              return allIpams(context);
            }
            ids.add(new ResourceID(p.substring(EgressPolicy.POOL_PREFIX.length())));
          }
          return ids.isEmpty() ? allIpams(context) : ids; // emptied: the addresses freed may serve anyone
        }).build(), context);
    List<EventSource<?, EgressIPAM>> sources = new ArrayList<>(List.of(namespaces, nodes, claims, blocks));
    // The network's own objects, where the cluster serves them, so a hand edit or another tool's
    // write is repaired at once rather than at the next resync. Our own writes come back as events
    // too; they end in a pass that finds nothing to do.
    try {
      if (client.supports(HostSubnet.class)) {
        hostSubnets = new InformerEventSource<>(InformerEventSourceConfiguration
            .from(HostSubnet.class, EgressIPAM.class).withItemStore(new TransformingItemStore<>(Trimmed::hostSubnet))
            .withSecondaryToPrimaryMapper(h -> allIpams(context))
            .withOnUpdateFilter((now, before) -> !Objects.equals(now.getEgressIPs(), before.getEgressIPs())
                || !Objects.equals(now.getEgressCIDRs(), before.getEgressCIDRs())
                || !Objects.equals(now.getHostIP(), before.getHostIP()))
            .build(), context);
        netNamespaces = new InformerEventSource<>(InformerEventSourceConfiguration
            .from(NetNamespace.class, EgressIPAM.class)
            .withItemStore(new TransformingItemStore<>(Trimmed::netNamespace))
            .withSecondaryToPrimaryMapper(n -> allIpams(context))
            .withOnUpdateFilter((now, before) -> !Objects.equals(now.getEgressIPs(), before.getEgressIPs()))
            .build(), context);
        netNamespaces.addIndexers(Map.of(BY_EGRESS_IP, n -> n.getEgressIPs() == null ? List.of() : n.getEgressIPs()));
        sources.add(hostSubnets);
        sources.add(netNamespaces);
      }
    } catch (RuntimeException e) {
      LOG.warn("cannot tell whether OpenShift SDN's APIs are served; its objects are read from the API server: {}",
          e.getMessage());
    }
    // OVN-Kubernetes: our EgressIPs (labelled with their IPAM), not listed on every pass; neither OVN's
    // status updates nor our own writes coming back start a pass. Served later than our start: listed
    // per pass, as before.
    try {
      if (client.supports("k8s.ovn.org/v1", "EgressIP")) {
        egressIps = new InformerEventSource<>(InformerEventSourceConfiguration
            .from(new GroupVersionKind("k8s.ovn.org", "v1", "EgressIP"), EgressIPAM.class)
            .withLabelSelector(EgressAnnotations.MANAGED_BY)
            .withItemStore(new TransformingItemStore<>(OvnWriter::trimmed))
            .withSecondaryToPrimaryMapper(e -> OvnWriter.ipamOf(e) == null ? Set.of()
                : Set.of(new ResourceID(OvnWriter.ipamOf(e))))
            .withOnAddFilter(e -> !ownEgressIpWrite(e))
            .withOnUpdateFilter((now, before) -> OvnWriter.changed(now, before) && !ownEgressIpWrite(now))
            .build(), context);
        egressIps.addIndexers(Map.of(BY_IPAM, e -> OvnWriter.ipamOf(e) == null ? List.of()
            : List.of(OvnWriter.ipamOf(e))));
        sources.add(egressIps);
      }
    } catch (RuntimeException e) {
      LOG.warn("cannot tell whether OVN-Kubernetes' EgressIP API is served; EgressIPs are listed per pass: {}",
          e.getMessage());
    }
    return sources;
  }

  private static Set<ResourceID> allIpams(EventSourceContext<EgressIPAM> context) {
    return context.getPrimaryCache().list().map(ResourceID::fromResource).collect(Collectors.toSet());
  }

  private static Map<String, String> annotations(HasMetadata o) {
    return EgressFacts.annotations(o);
  }

  // ---------------------------------------------------------------- views: informer + our writes

  private static <T extends HasMetadata> Map<String, T> view(InformerEventSource<T, EgressIPAM> source,
      Predicate<T> filter, RecentWrites<T> written, Collection<T> cached) {
    Map<String, T> out = new LinkedHashMap<>();
    for (T o : cached) {
      T v = written.view(o.getMetadata().getName(), o);
      if (v != null && filter.test(v)) {
        out.put(v.getMetadata().getName(), v);
      }
    }
    for (String name : written.pending()) {
      if (!out.containsKey(name) && (source == null || source.get(new ResourceID(name)).isEmpty())) {
        T v = written.view(name, null);
        if (v != null && filter.test(v)) {
          out.put(name, v);
        }
      }
    }
    return out;
  }

  private Namespace namespace(String name) {
    return namespacesWritten.view(name, namespaces.get(new ResourceID(name)).orElse(null));
  }

  private Map<String, Namespace> optedIn(String ipam) {
    Predicate<Namespace> names = ns -> EgressFacts.optsIn(ns, ipam);
    return view(namespaces, names, namespacesWritten, namespaces.byIndex(BY_IPAM, ipam));
  }

  private Collection<HostSubnet> hostSubnetView() {
    if (hostSubnets == null) {
      return client.resources(HostSubnet.class).list().getItems();
    }
    return view(hostSubnets, h -> true, hostSubnetsWritten, hostSubnets.list(h -> true).toList()).values();
  }

  private NetNamespace netNamespace(String name) {
    if (netNamespaces == null) {
      return client.resources(NetNamespace.class).withName(name).get();
    }
    return netNamespacesWritten.view(name, netNamespaces.get(new ResourceID(name)).orElse(null));
  }

  /** This IPAM's EgressIPs: the informer's and our writes it has not shown yet (no informer: listed). */
  private OvnWriter.View egressIpView() {
    if (egressIps == null) {
      return OvnWriter.listing(client);
    }
    return new OvnWriter.View() {
      @Override
      public Collection<GenericKubernetesResource> mine(String ipam) {
        return view(egressIps, e -> ipam.equals(OvnWriter.ipamOf(e)), egressIpsWritten,
            egressIps.byIndex(BY_IPAM, ipam)).values();
      }

      @Override
      public void wrote(GenericKubernetesResource written) {
        egressIpsWritten.wrote(written);
      }

      @Override
      public void deleted(String name, String resourceVersion) {
        egressIpsWritten.deleted(name, resourceVersion);
      }
    };
  }

  /** An EgressIP exactly as our last write of it left it: the pass that wrote it has planned it already. */
  private boolean ownEgressIpWrite(GenericKubernetesResource e) {
    GenericKubernetesResource written = egressIpsWritten.view(e.getMetadata().getName(), null);
    return written != null
        && Objects.equals(written.getMetadata().getResourceVersion(), e.getMetadata().getResourceVersion());
  }

  private void wroteNetworkObject(HasMetadata o) {
    if (o instanceof HostSubnet h) {
      hostSubnetsWritten.wrote(h);
    } else if (o instanceof NetNamespace n) {
      netNamespacesWritten.wrote(n);
    }
  }

  /**
   * Every claim of the ledgers as facts (IPClaims and block entries), each object parsed once per
   * version; what our pool holds is kept in {@code ours}.
   */
  private List<ClaimFact> claimFacts(String ipam, Map<Ip, Held> ours) {
    Map<String, IPClaim> all = view(claims, c -> true, claimsWritten, claims.list(c -> true).toList());
    List<ClaimFact> out = new ArrayList<>(all.size());
    String pool = pool(ipam);
    for (IPClaim c : all.values()) {
      String name = c.getMetadata().getName();
      String version = c.getMetadata().getResourceVersion();
      ParsedClaim p = parsed.get(name);
      if (p == null || !Objects.equals(p.version(), version)) {
        p = new ParsedClaim(version, fact(c));
        parsed.put(name, p);
      }
      if (p.fact() == null) {
        continue;
      }
      out.add(p.fact());
      if (pool.equals(p.fact().pool())) {
        ours.put(p.fact().address(), new Held(p.fact().address(), p.fact().ownerName(),
            c.getMetadata().getLabels() != null && "manual".equals(c.getMetadata().getLabels().get(LABEL_ORIGIN)), c));
      }
    }
    if (parsed.size() > 2 * all.size() + 1024) {
      parsed.keySet().retainAll(all.keySet());
    }
    Map<String, IPBlock> allBlocks = view(blocks, b -> true, blocksWritten, blocks.list(b -> true).toList());
    for (IPBlock b : allBlocks.values()) {
      String name = b.getMetadata().getName();
      ParsedBlock p = parsedBlocks.get(name);
      if (p == null || !Objects.equals(p.version(), b.getMetadata().getResourceVersion())) {
        p = new ParsedBlock(b.getMetadata().getResourceVersion(), EgressFacts.claims(b));
        parsedBlocks.put(name, p);
      }
      for (ClaimFact f : p.facts()) {
        out.add(f);
        if (pool.equals(f.pool())) {
          IPBlockEntry e = b.entries().get(f.address().toString());
          ours.put(f.address(), new Held(f.address(), f.ownerName(), e != null && "manual".equals(e.origin()), null));
        }
      }
    }
    if (parsedBlocks.size() > allBlocks.size() + 1024) {
      parsedBlocks.keySet().retainAll(allBlocks.keySet());
    }
    return out;
  }

  private ParsedSubnet parsedSubnet(HostSubnet h) {
    String name = h.getMetadata().getName();
    String version = h.getMetadata().getResourceVersion();
    ParsedSubnet p = parsedSubnets.get(name);
    if (p == null || version == null || !version.equals(p.version())) {
      p = new ParsedSubnet(version, java.util.Collections.unmodifiableSet(SdnWriter.hosting(List.of(h)).get(name)),
          SdnWriter.hostIps(List.of(h)).get(name));
      if (parsedSubnets.size() > 4096) {
        parsedSubnets.clear(); // nodes come and go: a bound, not a leak
      }
      parsedSubnets.put(name, p);
    }
    return p;
  }

  private static ClaimFact fact(IPClaim c) {
    return EgressFacts.claim(c);
  }

  // ---------------------------------------------------------------- reconcile

  @Override
  public UpdateControl<EgressIPAM> reconcile(EgressIPAM ipam, Context<EgressIPAM> context) {
    long start = System.nanoTime();
    try {
      return pass(ipam);
    } finally {
      metrics.pass(ipam.getMetadata().getName(), Duration.ofNanos(System.nanoTime() - start));
    }
  }

  private UpdateControl<EgressIPAM> pass(EgressIPAM ipam) {
    String name = ipam.getMetadata().getName();
    dropLegacyFinalizer(ipam);
    NetworkType network = detector.detect();
    Platform platform = platforms.current();
    NodeNetworks.Selection selection = networks.select(platform);
    NodeNetwork nodeNetwork = selection.network().configuredBy(annotations(ipam));
    NetworkCapabilities caps = nodeNetwork.capabilities();

    // 1. Fetch.
    long fetchStart = System.nanoTime();
    Map<String, Namespace> opted = optedIn(name);
    List<NamespaceState> wanting = opted.values().stream().filter(ns -> ns.getMetadata().getDeletionTimestamp() == null)
        .map(EgressFacts::namespace)
        .toList();
    Map<Ip, Held> ourClaims = new HashMap<>();
    List<ClaimFact> claimFacts = claimFacts(name, ourClaims);
    List<Node> allNodes = nodes.list(n -> true).toList();
    // Who attaches to the cloud interfaces: on OVN-Kubernetes where OpenShift does (CNCC), not us.
    // Reading the cloud for the addresses in use in the subnets (seesForeignAddresses) is another
    // path and stays: allocation still skips what other resources use.
    CloudAttachment attachment = cloudAttachment(platform, caps, network, allNodes);
    boolean attaches = attachment.byThisController();
    boolean cloudWithoutModule = attachment == CloudAttachment.MISSING_MODULE;
    Collection<HostSubnet> subnets = network == NetworkType.OPENSHIFT_SDN ? hostSubnetView() : List.of();
    Map<String, Set<Ip>> sdnHosting = new HashMap<>();
    Map<String, Ip> hostIps = new HashMap<>();
    for (HostSubnet h : subnets) {
      ParsedSubnet p = parsedSubnet(h);
      sdnHosting.put(h.getMetadata().getName(), p.hosting());
      if (p.hostIp() != null) {
        hostIps.put(h.getMetadata().getName(), p.hostIp());
      }
    }
    List<NodeFacts> nodeFacts = new ArrayList<>(allNodes.size());
    for (Node n : allNodes) {
      String nodeName = n.getMetadata().getName();
      Map<String, String> labels = EgressFacts.labels(n);
      String providerId = EgressFacts.providerId(n);
      NodeFacts.CloudView cloud = null;
      if (attaches && EgressPolicy.describes(ipam.getSpec(), labels, providerId != null)) {
        List<Ip> own = new ArrayList<>(EgressFacts.ownAddresses(n, hostIps.get(nodeName)));
        try {
          NodeAttachment a = nodeNetwork.describe(new NodeRef(nodeName, providerId, labels, own));
          cloud = new NodeFacts.CloudView(Set.copyOf(a.secondaryAddresses()), a.capacity(), a.marked());
        } catch (NodeNetworkException e) {
          cloud = NodeFacts.CloudView.failed(e.getMessage(), e.retryable());
        }
      }
      nodeFacts.add(EgressFacts.node(n, hostIps.get(nodeName), sdnHosting.getOrDefault(nodeName, Set.of()), cloud));
    }
    Map<String, EgressInputs.InUse> inUse = new HashMap<>();
    if (caps.seesForeignAddresses()) {
      for (CIDRAssignment c : EgressPolicy.cidrs(ipam.getSpec())) {
        IpRange range;
        try {
          range = IpRange.parse(c.cidr());
        } catch (RuntimeException e) {
          continue; // reported by the spec check
        }
        try {
          inUse.put(c.cidr(), new EgressInputs.InUse(nodeNetwork.addressesInUse(range), null));
        } catch (NodeNetworkException e) {
          inUse.put(c.cidr(), new EgressInputs.InUse(Set.of(), e.getMessage()));
        }
      }
    }
    EgressInputs inputs = new EgressInputs(name, ipam.getSpec(), wanting, claimFacts, nodeFacts,
        new EgressInputs.PlatformNetwork(attaches, caps.reportsCapacity(), caps.seesForeignAddresses(),
            platform.needsCloudApi()), inUse);

    // 2. Decide: again only what changed since the previous pass, in full now and then to check.
    Instant now = clock.instant();
    Map<String, Instant> failedBefore = failureHistory.getOrDefault(name, Map.of());
    Orphans.Watch watched = orphanWatch.getOrDefault(name, Orphans.Watch.start(orphanGrace));
    EgressDecision decision = decideIncrementally(name, inputs, failedBefore, now, watched);
    orphanWatch.put(name, decision.orphans().next());
    metrics.plan(name, Duration.ofNanos(System.nanoTime() - fetchStart), wanting.size() - decision.reused(),
        decision.reused());
    failureHistory.put(name, decision.failureHistory());
    EgressPlan plan = decision.plan();
    decision.capacityProblems().forEach((node, message) -> allNodes.stream()
        .filter(n -> n.getMetadata().getName().equals(node)).findFirst()
        .ifPresent(n -> events.warning(n, "InvalidEgressCapacity", message)));
    if (!plan.specValid()) {
      String message = plan.specMessage();
      events.warning(ipam, "InvalidSpec", message);
      return patchIfChanged(ipam, status(ipam, network, platform, plan, false, "InvalidSpec", message, List.of(),
          decision.capacityProblems()), null);
    }

    // 3. Apply, in the order EgressWrites gives: unpublish, claim and publish, cloud, network, release.
    long persistStart = System.nanoTime();
    List<String> failures = new ArrayList<>(decision.platformProblems());
    Set<String> cleared = new HashSet<>();
    for (Ip ip : plan.toRelease()) {
      String ns = ourClaims.get(ip).namespace();
      if (!plan.served().containsKey(ns) && namespace(ns) != null) {
        cleared.add(ns);
      }
    }
    List<String> unpublishFailures = unpublishLeavers(name, cleared);
    failures.addAll(unpublishFailures);
    Map<String, List<Ip>> served = new ConcurrentSkipListMap<>(plan.served());
    boolean claimRetry = claimAndPublish(name, plan, decision, opted, served);
    boolean discoveryRetry = !decision.deferred().isEmpty();
    // The platform (attach to interfaces: a no-op on bare metal), then the cluster network.
    Set<Ip> servedIps = new HashSet<>();
    served.values().forEach(servedIps::addAll);
    // Left to OpenShift: not even the placement's moves go to the cloud (OVN places, CNCC attaches).
    List<AddressChange> changes = attachment == CloudAttachment.OPENSHIFT ? List.of()
        : EgressPolicy.cloudChanges(plan, servedIps, attaches);
    CloudOutcome cloud = applyCloud(nodeNetwork, changes);
    List<String> cloudFailures = new ArrayList<>(cloud.failures());
    if (attaches && !decision.orphans().due().isEmpty()) {
      cloudFailures.addAll(takeOffOrphans(ipam, nodeNetwork, decision.orphans().due(), now));
    }
    failures.addAll(cloudFailures);
    if (!decision.platformProblems().isEmpty() || !cloudFailures.isEmpty()) {
      // One Event per distinct message (the recorder counts repeats): which call, node and code.
      List<String> all = new ArrayList<>(decision.platformProblems());
      all.addAll(cloudFailures);
      events.warning(ipam, "CloudCallFailed", String.join("; ", all));
    }
    long networkStart = System.nanoTime();
    metrics.step(name, "claim+publish", Duration.ofNanos(networkStart - persistStart));
    if (network == NetworkType.OPENSHIFT_SDN) {
      cleared.addAll(EgressWrites.toClear(served, netNamespacesShowing(ourClaims.keySet())));
    }
    NetworkWrite write = EgressPolicy.networkWrite(name, ipam.getSpec(), plan, served, cleared, decision.nodes(),
        platform.needsCloudApi()).withForeign(foreignIn(ipam, claimFacts));
    List<String> networkFailures = writeNetwork(network, write, subnets, allNodes);
    failures.addAll(networkFailures);
    List<String> writeFailures = new ArrayList<>(unpublishFailures);
    writeFailures.addAll(networkFailures);
    if (!writeFailures.isEmpty()) {
      events.warning(ipam, "NetworkWriteFailed", String.join("; ", writeFailures));
    }
    // Released last, and only what no place shows any more (see EgressWrites).
    EgressWrites.Release released = EgressWrites.release(plan.toRelease(),
        new ShownAfterWrites(name, network, ourClaims, true, decision.attached(), decision.attachmentsUnknown(),
            cloud.detached())::find);
    release(released.now().stream().map(ourClaims::get).toList());
    if (!released.kept().isEmpty()) {
      LOG.info("IPAM {}: {}", name, released.describeKept());
    }
    boolean heldOnNetwork = released.kept().values().stream()
        .anyMatch(s -> s.surface() != EgressWrites.Surface.INTERFACE);
    boolean heldOnInterface = released.kept().values().stream()
        .anyMatch(s -> s.surface() == EgressWrites.Surface.INTERFACE);
    if (cloudWithoutModule) {
      failures.add("platform " + platform.type() + " needs its cloud module to attach egress IPs to the nodes' "
          + "interfaces, and none is configured" + (selection.problem() == null ? "" : " (" + selection.problem() + ")")
          + ": the addresses are allocated and written to the cluster network, but the cloud will not route them");
    }
    metrics.step(name, "network", Duration.ofNanos(System.nanoTime() - networkStart));
    // 4. Report.
    recordMetrics(ipam, plan, decision.nodes(), decision.verdicts(), now);
    for (NamespaceProblem p : plan.problems()) {
      Namespace n = opted.get(p.namespace());
      if (n != null) {
        events.warning(n, p.rejected() ? "EgressIPRejected" : "EgressIPPending", p.message());
      }
    }
    for (Unplaceable u : plan.placement().unplaceable()) {
      Namespace n = opted.get(u.owner());
      if (n != null) {
        events.warning(n, "EgressIPUnplaceable", u.message());
      }
    }
    if (attachment == CloudAttachment.OPENSHIFT && attachmentTold.get(name) != CloudAttachment.OPENSHIFT) {
      events.normal(ipam, "CloudAttachmentLeftToOpenShift", attachment.statusNote());
    }
    attachmentTold.put(name, attachment);
    boolean ok = failures.isEmpty() && network != NetworkType.NONE;
    String reason = network == NetworkType.NONE ? "UnsupportedNetwork"
        : failures.isEmpty() ? "Reconciled" : "NetworkWriteFailed";
    String message = network == NetworkType.NONE
        ? "neither OpenShift SDN (HostSubnet) nor OVN-Kubernetes (EgressIP) is served by this cluster; addresses are allocated but not configured"
        : failures.isEmpty() ? selection.description() : String.join("; ", failures);
    if (attachment.statusNote() != null) {
      message = message.isEmpty() ? attachment.statusNote() : message + "; " + attachment.statusNote();
    }
    EgressIPAM patch = status(ipam, network, platform, plan, ok, reason, message, failures, decision.capacityProblems());
    Duration next = decision.nextReview();
    if (claimRetry || !writeFailures.isEmpty() || heldOnNetwork) {
      next = backoff.next(name); // a refused write: again, later each time, until it goes through
    } else {
      backoff.reset(name);
      if ((cloud.retry() || discoveryRetry || heldOnInterface)
          && (next == null || next.compareTo(CLOUD_RETRY) > 0)) {
        next = CLOUD_RETRY; // throttled or 5xx after the SDK's own retries: again a little later
      }
    }
    return patchIfChanged(ipam, patch, next);
  }


  /** What the cloud step did: its failures, whether one may pass, and the detaches it answered. */
  private record CloudOutcome(List<String> failures, boolean retry, Set<Ip> detached) {}

  /**
   * Step 1 of a pass: a namespace that left this IPAM (or is being deleted: it may stay Terminating for long) loses
   * the annotation this IPAM wrote. Returns one message per namespace whose annotation could not be removed; its
   * addresses stay claimed (the release finds them still shown) and a later pass removes it again.
   */
  private List<String> unpublishLeavers(String ipam, Set<String> cleared) {
    List<String> failures = new ArrayList<>();
    for (String ns : cleared) {
      Namespace n = namespace(ns);
      boolean left = n != null && (!ipam.equals(annotations(n).get(EgressAnnotations.EGRESSIPAM))
          || n.getMetadata().getDeletionTimestamp() != null);
      if (left && annotations(n).containsKey(EgressAnnotations.EGRESSIPS)) {
        String refused = removeAnnotation(ns);
        if (refused != null) {
          failures.add("Namespace " + ns + ": " + refused);
        }
      }
    }
    return failures;
  }

  /**
   * Step 2: every namespace's missing addresses claimed at once (one write per block touched), then per namespace,
   * in parallel (namespaces are independent), all its addresses or none, published in the annotation. A namespace
   * that did not get all of them leaves {@code served} and gives back what it got. True when a later pass must try
   * again.
   */
  private boolean claimAndPublish(String ipam, EgressPlan plan, EgressDecision decision, Map<String, Namespace> opted,
      Map<String, List<Ip>> served) {
    Map<String, List<Ip>> claiming = new LinkedHashMap<>();
    for (String ns : plan.served().keySet()) {
      IpRange unknown = decision.deferred().get(ns);
      if (unknown != null) {
        served.remove(ns);
        events.warning(opted.get(ns), "EgressIPPending", "the addresses in use in " + unknown
            + " could not be discovered; " + plan.toClaim().get(ns) + " will be claimed once they are");
        continue;
      }
      List<Ip> toClaim = plan.toClaim().getOrDefault(ns, List.of());
      String value = plan.annotations().get(ns);
      boolean recordMissing = !Objects.equals(annotations(opted.get(ns)).get(EgressAnnotations.EGRESSIPS_PUBLISHED),
          value == null ? annotations(opted.get(ns)).get(EgressAnnotations.EGRESSIPS) : value);
      if (toClaim.isEmpty() && value == null && !recordMissing) {
        continue; // nothing to write
      }
      claiming.put(ns, toClaim);
    }
    Map<Ip, BlockClaim> claimed = claimAll(ipam, opted, claiming);
    Map<Ip, ClaimOwner> giveBack = new ConcurrentHashMap<>();
    AtomicBoolean retry = new AtomicBoolean();
    List<Callable<Void>> tasks = new ArrayList<>();
    for (var e : claiming.entrySet()) {
      String ns = e.getKey();
      String value = plan.annotations().get(ns);
      tasks.add(() -> {
        if (!allClaimed(opted.get(ns), e.getValue(), claimed, giveBack) || !publish(opted.get(ns), value)) {
          served.remove(ns);
          retry.set(true);
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
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
    if (!giveBack.isEmpty()) {
      // Never published (the namespace did not get all of its addresses): nothing shows them.
      blockLedger.releaseAll(giveBack);
    }
    return retry.get();
  }

  /** Step 3: the cloud's attaches, moves and detaches, and what it answered. */
  private static CloudOutcome applyCloud(NodeNetwork nodeNetwork, List<AddressChange> changes) {
    Set<Ip> detached = new HashSet<>();
    Set<Ip> detachFailed = new HashSet<>();
    List<String> failures = new ArrayList<>();
    boolean retry = false;
    for (AddressChangeResult r : changes.isEmpty() ? List.<AddressChangeResult>of() : nodeNetwork.apply(changes)) {
      boolean detach = r.change().kind() == AddressChange.Kind.DETACH;
      if (detach) {
        detached.add(r.change().address());
      }
      if (r.outcome() == AddressChangeResult.Outcome.FAILED) {
        if (detach) {
          detachFailed.add(r.change().address());
        }
        retry |= r.retryable();
        failures.add(r.change().kind() + " " + r.change().address() + " on "
            + (r.change().toNode() != null ? r.change().toNode() : r.change().fromNode()) + ": "
            + r.message() + (r.errorCode() == null ? "" : " (" + r.errorCode() + ")"));
      }
    }
    detached.removeAll(detachFailed);
    return new CloudOutcome(failures, retry, detached);
  }

  /** Step 4: the cluster network's objects; one message per object that could not be written. */
  private List<String> writeNetwork(NetworkType network, NetworkWrite write, Collection<HostSubnet> subnets,
      List<Node> allNodes) {
    return switch (network) {
      case OPENSHIFT_SDN -> new SdnWriter(client, this::netNamespace, () -> subnets, this::wroteNetworkObject, writers)
          .apply(write);
      case OVN_KUBERNETES -> new OvnWriter(client, egressIpView(), writers).apply(write, allNodes);
      case NONE -> List.of();
    };
  }

  /** Namespace to the given addresses its NetNamespace shows (the informer's view with our writes over it). */
  private Map<String, Set<Ip>> netNamespacesShowing(Set<Ip> addresses) {
    Map<String, Set<Ip>> out = new HashMap<>();
    if (netNamespaces == null) {
      return out;
    }
    for (Ip ip : addresses) {
      for (NetNamespace n : netNamespaces.byIndex(BY_EGRESS_IP, ip.toString())) {
        NetNamespace v = netNamespace(n.getMetadata().getName());
        if (v != null && v.getEgressIPs() != null && v.getEgressIPs().contains(ip.toString())) {
          out.computeIfAbsent(v.getMetadata().getName(), k -> new HashSet<>()).add(ip);
        }
      }
    }
    return out;
  }

  /** The addresses inside this IPAM's CIDRs that another pool or controller holds: never ours to write or clear. */
  private static Set<Ip> foreignIn(EgressIPAM ipam, List<ClaimFact> claims) {
    List<IpRange> ranges = EgressPolicy.parsableCidrs(ipam.getSpec());
    String pool = pool(ipam.getMetadata().getName());
    Set<Ip> out = new HashSet<>();
    for (ClaimFact c : claims) {
      if (!pool.equals(c.pool()) && ranges.stream().anyMatch(r -> r.contains(c.address()))) {
        out.add(c.address());
      }
    }
    return out;
  }

  /**
   * Where an address is still shown once a pass's (or a deletion's) writes were applied: the holder's annotation
   * (unless it is the user's own, kept at deletion), any NetNamespace, HostSubnet or EgressIP of this IPAM, a
   * node's interface whose detach did not go through. Read from the informers' views with our own writes over
   * them, so a write that failed leaves the address shown.
   */
  private final class ShownAfterWrites {
    private final Map<Ip, Held> held;
    private final boolean annotationCounts;
    private final Set<Ip> attached;
    private final boolean attachmentsUnknown;
    private final Set<Ip> detached;
    private final Map<Ip, String> onHostSubnets = new HashMap<>();
    private final Map<Ip, String> onEgressIps = new HashMap<>();

    ShownAfterWrites(String ipam, NetworkType network, Map<Ip, Held> held, boolean annotationCounts, Set<Ip> attached,
        boolean attachmentsUnknown, Set<Ip> detached) {
      this.held = held;
      this.annotationCounts = annotationCounts;
      this.attached = attached;
      this.attachmentsUnknown = attachmentsUnknown;
      this.detached = detached;
      if (network == NetworkType.OPENSHIFT_SDN) {
        for (HostSubnet h : hostSubnetView()) {
          parsedSubnet(h).hosting().forEach(ip -> onHostSubnets.put(ip, h.getMetadata().getName()));
        }
      } else if (network == NetworkType.OVN_KUBERNETES) {
        for (GenericKubernetesResource e : egressIpView().mine(ipam)) {
          EgressFacts.egressIpAddresses(e).forEach(ip -> onEgressIps.put(ip, e.getMetadata().getName()));
        }
      }
    }

    Optional<EgressWrites.Sighting> find(Ip ip) {
      Held h = held.get(ip);
      String ns = h == null ? null : h.namespace();
      Namespace n = ns == null ? null : namespace(ns);
      if (n != null && annotationCounts && EgressFacts.annotatedAddresses(n).contains(ip)) {
        return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.ANNOTATION, ns));
      }
      NetNamespace own = ns == null ? null : netNamespace(ns);
      if (own != null && own.getEgressIPs() != null && own.getEgressIPs().contains(ip.toString())) {
        return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.NET_NAMESPACE, ns));
      }
      Optional<String> other = netNamespacesShowing(Set.of(ip)).keySet().stream().findFirst();
      if (other.isPresent()) {
        return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.NET_NAMESPACE, other.get()));
      }
      if (onHostSubnets.containsKey(ip)) {
        return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.HOST_SUBNET, onHostSubnets.get(ip)));
      }
      if (onEgressIps.containsKey(ip)) {
        return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.EGRESS_IP, onEgressIps.get(ip)));
      }
      if (attachmentsUnknown || attached.contains(ip) && !detached.contains(ip)) {
        return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.INTERFACE,
            attachmentsUnknown ? "(not readable now)" : "(detach not confirmed)"));
      }
      return Optional.empty();
    }
  }

  /** Who attaches the addresses to the nodes' cloud interfaces (see {@link CloudAttachment}). */
  private static CloudAttachment cloudAttachment(Platform platform, NetworkCapabilities caps, NetworkType network,
      List<Node> allNodes) {
    return CloudAttachment.decide(platform.needsCloudApi(), caps.requiresApiCalls(), network,
        CloudAttachment.openShiftAttaches(allNodes.stream().map(EgressIPAMReconciler::annotations).toList()));
  }

  /**
   * The decision from the previous pass's plan; when none is kept (first pass, restart) a full one.
   * Every {@link #FULL_CHECK} the full decision is made as well: a difference is logged and
   * counted, and the full one is used.
   */
  private EgressDecision decideIncrementally(String name, EgressInputs inputs, Map<String, Instant> failedBefore,
      Instant now, Orphans.Watch orphansBefore) {
    EgressPlanner.Memory previous = INCREMENTAL ? plans.get(name) : null;
    Instant lastFull = lastFullPlan.get(name);
    EgressDecision decision = EgressPolicy.decide(inputs, failedBefore, now,
        previous == null ? EgressPlanner.Memory.NONE : previous, orphansBefore);
    if (previous != null && lastFull != null && Duration.between(lastFull, now).compareTo(FULL_CHECK) < 0) {
      plans.put(name, decision.memory());
      return decision;
    }
    if (previous != null) {
      EgressDecision full = EgressPolicy.decide(inputs, failedBefore, now, EgressPlanner.Memory.NONE, orphansBefore);
      if (!full.plan().equals(decision.plan())) {
        LOG.warn("IPAM {}: the incremental plan differed from the full plan; the full plan is used", name);
        metrics.planMismatch(name);
      }
      decision = full;
    }
    lastFullPlan.put(name, now);
    plans.put(name, decision.memory());
    return decision;
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

  /** The status patch, or no write at all when the status would not change. */
  private static UpdateControl<EgressIPAM> patchIfChanged(EgressIPAM ipam, EgressIPAM patch, Duration next) {
    UpdateControl<EgressIPAM> control = Objects.equals(patch.getStatus(), ipam.getStatus())
        ? UpdateControl.noUpdate() : UpdateControl.patchStatus(patch);
    return next == null ? control : control.rescheduleAfter(next);
  }

  /**
   * Claims the missing addresses of every namespace to be written in this pass, in one call of the
   * block ledger (one write per block touched). Manual addresses are recorded as such, so that the
   * IPAM's deletion leaves them in their namespaces.
   */
  private Map<Ip, BlockClaim> claimAll(String ipam, Map<String, Namespace> opted, Map<String, List<Ip>> claiming) {
    List<BlockRequest> requests = new ArrayList<>();
    claiming.forEach((ns, ips) -> {
      String expected = annotations(opted.get(ns)).get(EgressAnnotations.EGRESSIPS);
      boolean manual = expected != null && !expected.isBlank();
      ips.forEach(ip -> requests.add(new BlockRequest(ip, pool(ipam), owner(ns), manual ? "manual" : "allocated")));
    });
    return requests.isEmpty() ? Map.of() : blockLedger.claimAll(requests);
  }

  /**
   * Whether a namespace got every address it asked for; when not, what it got goes in {@code
   * giveBack} (released after the pass's writes) and the namespace is told why when another owner
   * was first.
   */
  private boolean allClaimed(Namespace ns, List<Ip> toClaim, Map<Ip, BlockClaim> claimed, Map<Ip, ClaimOwner> giveBack) {
    String name = ns.getMetadata().getName();
    BlockClaim refused = toClaim.stream().map(claimed::get).filter(r -> r == null || !r.ours()).findFirst()
        .orElse(null);
    if (refused == null && toClaim.stream().allMatch(claimed::containsKey)) {
      return true;
    }
    toClaim.stream().filter(ip -> claimed.get(ip) != null && claimed.get(ip).ours())
        .forEach(ip -> giveBack.put(ip, owner(name)));
    if (refused != null && refused.outcome() == BlockClaim.Outcome.HELD_BY_OTHER) {
      events.warning(ns, "AddressTaken", refused.ip() + " was claimed by "
          + (refused.holder() == null ? "another owner" : refused.holder().describe())
          + " first; another address will be chosen");
    } else if (refused != null) {
      LOG.info("namespace {}: {} could not be claimed in this pass: {}", name, refused.ip(), refused.message());
    }
    return false;
  }

  /**
   * Publishes a namespace's addresses: one merge patch of its annotations, conditioned on the
   * resourceVersion the plan was made from (so a replica with an older view never overwrites a
   * published address), carrying egressips and the record of what was published. False when it
   * must be retried.
   */
  private boolean publish(Namespace ns, String value) {
    String name = ns.getMetadata().getName();
    String expected = annotations(ns).get(EgressAnnotations.EGRESSIPS);
    String published = value != null ? value : expected;
    Map<String, Object> annotations = new HashMap<>();
    annotations.put(EgressAnnotations.EGRESSIPS, published);
    annotations.put(EgressAnnotations.EGRESSIPS_PUBLISHED, published);
    Map<String, Object> meta = new HashMap<>();
    meta.put("resourceVersion", ns.getMetadata().getResourceVersion());
    meta.put("annotations", annotations);
    try {
      namespacesWritten.wrote(client.namespaces().withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
          Serialization.asJson(Map.of("metadata", meta))));
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 || e.getCode() == 404) {
        return false; // changed since the plan (or gone): the next pass starts from the new object
      }
      throw e;
    }
  }

  /**
   * Releases held addresses: block entries in one write per block; an IPClaim of an older version
   * is deleted (guarded by its resourceVersion), never converted.
   */
  private void release(Collection<Held> held) {
    Map<Ip, ClaimOwner> entries = new HashMap<>();
    for (Held h : held) {
      if (h.claim() == null) {
        entries.put(h.ip(), owner(h.namespace()));
      } else if (ledger.release(h.ip(), h.claim().getSpec().owner())) {
        claimsWritten.deleted(h.claim().getMetadata().getName(), h.claim().getMetadata().getResourceVersion());
      }
    }
    if (!entries.isEmpty()) {
      blockLedger.releaseAll(entries);
    }
  }

  private void recordMetrics(EgressIPAM ipam, EgressPlan plan, List<NodeInfo> nodeInfos,
      Map<String, NodeVerdict> verdicts, Instant now) {
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
      int hosted = plan.placement().assignments().getOrDefault(n.name(), new TreeSet<>()).size();
      round.gauge("egressip_ip_allocated", "Egress IPs placed on a node, its own address included",
          hosted + 1, "node", n.name());
    }
    for (EgressPlan.CidrUsage u : plan.usage()) {
      round.gauge("egressip_cidr_capacity", "Usable addresses of a CIDR", u.capacity().doubleValue(), "cidr", u.cidr());
      round.gauge("egressip_cidr_allocated", "Addresses of a CIDR held by namespaces", u.allocated().doubleValue(), "cidr", u.cidr());
      round.gauge("egressip_cidr_free", "Free addresses of a CIDR", u.free().doubleValue(), "cidr", u.cidr());
    }
    long rejected = plan.problems().stream().filter(NamespaceProblem::rejected).count();
    round.gauge("egressip_namespaces", "Opted-in namespaces by state", plan.served().size(), "state", "assigned");
    round.gauge("egressip_namespaces", "Opted-in namespaces by state", plan.problems().size() - rejected, "state", "pending");
    round.gauge("egressip_namespaces", "Opted-in namespaces by state", rejected, "state", "rejected");
    round.gauge("egressip_unplaceable_ips", "Addresses no node can host now", plan.placement().unplaceable().size());
    round.close();
    for (var change : plan.placement().changes(Change.Kind.MOVE)) {
      NodeVerdict v = verdicts.get(change.from());
      if (v != null && v.failed()) {
        metrics.failover(name, Duration.between(v.since(), now));
      }
    }
  }

  private EgressIPAM status(EgressIPAM ipam, NetworkType network, Platform platform, EgressPlan plan, boolean ready,
      String reason, String message, List<String> failures, Map<String, String> capacityProblems) {
    EgressIPAMStatus old = ipam.getStatus();
    Long generation = ipam.getMetadata().getGeneration();
    var conditions = Conditions.set(old == null ? null : old.conditions(), "Ready", ready, reason, message, generation);
    long rejected = plan.problems().stream().filter(NamespaceProblem::rejected).count();
    long pending = plan.problems().size() - rejected;
    int unplaceable = plan.placement().unplaceable().size();
    boolean degraded = rejected > 0 || pending > 0 || unplaceable > 0 || !failures.isEmpty()
        || !capacityProblems.isEmpty();
    String degradedMessage = degraded ? String.format(
        "%d namespace(s) rejected, %d pending, %d address(es) unplaceable%s%s", rejected, pending, unplaceable,
        failures.isEmpty() ? "" : ", " + failures.size() + " network write(s) failed",
        capacityProblems.isEmpty() ? "" : "; " + String.join("; ", capacityProblems.values())) : "";
    conditions = Conditions.set(conditions, "Degraded", degraded,
        degraded ? (rejected > 0 ? "NamespacesRejected" : pending > 0 ? "NamespacesPending"
            : unplaceable > 0 ? "Unplaceable" : !failures.isEmpty() ? "NetworkWriteFailed" : "InvalidNodeCapacity")
            : "AsExpected", degradedMessage, generation);
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

  /** Null when removed (or gone), else the API server's answer: the namespace still shows its addresses. */
  private String removeAnnotation(String ns) {
    Map<String, Object> annotations = new HashMap<>();
    annotations.put(EgressAnnotations.EGRESSIPS, null);
    annotations.put(EgressAnnotations.EGRESSIPS_PUBLISHED, null);
    try {
      namespacesWritten.wrote(client.namespaces().withName(ns).patch(PatchContext.of(PatchType.JSON_MERGE),
          Serialization.asJson(Map.of("metadata", Map.of("annotations", annotations)))));
      return null;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return null; // gone: it shows nothing
      }
      LOG.warn("could not remove {} from namespace {}: {}", EgressAnnotations.EGRESSIPS, ns, e.getMessage());
      return e.getMessage();
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
   * entries in its CIDRs, the cloud's attachments) and release each claim once nothing shows its
   * address any more; the finalizer stays until every claim is released, so a refused write is retried
   * (with back-off) rather than leaving an address shown that the ledger calls free. Works from the
   * claims, so an invalid spec never blocks it; manual addresses stay in their namespaces'
   * annotations (the user's own). A claim whose address does not parse is reported and left alone: it
   * cannot block the deletion. An API error reading the platform propagates (retried): cleanup never
   * runs as bare metal on a cloud, which would release claims of addresses still attached.
   */
  @Override
  public DeleteControl cleanup(EgressIPAM ipam, Context<EgressIPAM> context) {
    String name = ipam.getMetadata().getName();
    NetworkType network = detector.detect();
    Platform platform = platforms.current();
    NodeNetwork nodeNetwork = networks.select(platform).network();
    Map<Ip, Held> held = heldForCleanup(ipam);
    List<String> failures = new ArrayList<>();
    Set<String> cleared = new HashSet<>();
    List<IpRange> ranges = new ArrayList<>(EgressPolicy.parsableCidrs(ipam.getSpec())); // an invalid CIDR's addresses come from the claims
    for (var e : held.entrySet()) {
      Ip ip = e.getKey();
      if (ranges.stream().noneMatch(r -> r.contains(ip))) {
        ranges.add(IpRange.single(ip));
      }
      String ns = e.getValue().namespace();
      if (namespace(ns) != null && cleared.add(ns) && !e.getValue().manual()) {
        String refused = removeAnnotation(ns);
        if (refused != null) {
          failures.add("Namespace " + ns + ": " + refused);
        }
      }
    }
    NetworkWrite write = new NetworkWrite(name, ranges, Map.of(), cleared, Map.of(), Map.of(), Set.of());
    List<Node> allNodes = nodes.list(n -> true).toList();
    failures.addAll(writeNetwork(network, write, hostSubnetView(), allNodes));
    CloudCleanup cloud = cloudAttachment(platform, nodeNetwork.capabilities(), network, allNodes).byThisController()
        ? detachAll(name, nodeNetwork, allNodes, held.keySet()) : CloudCleanup.NOTHING;
    failures.addAll(cloud.failures());
    ShownAfterWrites shown = new ShownAfterWrites(name, network, held, false, cloud.attached(),
        cloud.undescribed(), cloud.detached());
    EgressWrites.Release released = EgressWrites.release(held.keySet(), ip -> {
      Held h = held.get(ip);
      Namespace n = namespace(h.namespace());
      if (!h.manual() && n != null && EgressFacts.annotatedAddresses(n).contains(ip)) {
        return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.ANNOTATION, h.namespace()));
      }
      return shown.find(ip);
    });
    release(released.now().stream().map(held::get).toList());
    if (!failures.isEmpty() || !released.kept().isEmpty()) {
      List<String> all = new ArrayList<>(failures);
      if (!released.kept().isEmpty()) {
        all.add(released.describeKept());
      }
      events.warning(ipam, "CleanupIncomplete", String.join("; ", all));
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(backoff.next(name));
    }
    metrics.forget(name);
    failureHistory.remove(name);
    orphanWatch.remove(name);
    attachmentTold.remove(name);
    plans.remove(name);
    lastFullPlan.remove(name);
    backoff.reset(name);
    return DeleteControl.defaultDelete();
  }

  /** What a deletion's cloud step found and did: addresses on interfaces, detaches answered, failures. */
  private record CloudCleanup(Set<Ip> attached, Set<Ip> detached, boolean undescribed, List<String> failures) {
    static final CloudCleanup NOTHING = new CloudCleanup(Set.of(), Set.of(), false, List.of());
  }

  /** Every claim of this IPAM (IPClaims of older versions and block entries); unparsable claims reported. */
  private Map<Ip, Held> heldForCleanup(EgressIPAM ipam) {
    String name = ipam.getMetadata().getName();
    Map<Ip, Held> held = new LinkedHashMap<>();
    List<String> unparsable = new ArrayList<>();
    for (IPClaim c : ledger.claimsOfPool(pool(name))) {
      try {
        Ip ip = Ip.parse(c.getSpec().address());
        held.put(ip, new Held(ip, c.getSpec().owner().name(),
            c.getMetadata().getLabels() != null && "manual".equals(c.getMetadata().getLabels().get(LABEL_ORIGIN)), c));
      } catch (RuntimeException e) {
        unparsable.add(c.getMetadata().getName() + " ('" + (c.getSpec() == null ? null : c.getSpec().address()) + "')");
      }
    }
    blockLedger.entriesOfPool(pool(name)).forEach((ip, e) -> held.put(ip,
        new Held(ip, e.owner().name(), "manual".equals(e.origin()), null)));
    if (!unparsable.isEmpty()) {
      events.warning(ipam, "UnparsableClaim", "IPClaim(s) " + String.join(", ", unparsable) + " carry this IPAM's pool"
          + " but no address; left in place, they do not hold up the deletion");
    }
    return held;
  }

  /**
   * A deletion's cloud step: every held address still on a node's interface is detached. A node whose interface
   * cannot be read for a reason that may pass (throttled, 5xx) leaves every claim in place until it can.
   */
  private CloudCleanup detachAll(String ipam, NodeNetwork nodeNetwork, List<Node> allNodes, Set<Ip> held) {
    List<AddressChange> detach = new ArrayList<>();
    Set<Ip> attached = new HashSet<>();
    List<String> failures = new ArrayList<>();
    boolean undescribed = false;
    for (Node n : allNodes) {
      String providerId = EgressFacts.providerId(n);
      if (providerId == null) {
        continue;
      }
      try {
        NodeAttachment a = nodeNetwork.describe(new NodeRef(n.getMetadata().getName(), providerId,
            EgressFacts.labels(n), new ArrayList<>(EgressFacts.ownAddresses(n, null))));
        a.secondaryAddresses().stream().filter(held::contains).forEach(ip -> {
          attached.add(ip);
          detach.add(AddressChange.detach(ip, n.getMetadata().getName()));
        });
      } catch (NodeNetworkException e) {
        if (e.retryable()) {
          undescribed = true; // its interface may still hold our addresses
          failures.add(e.getMessage());
        } else {
          // gone with its instance, or not ours to look at: nothing of ours can be taken off it
          LOG.debug("IPAM {} cleanup: {}", ipam, e.getMessage());
        }
      }
    }
    CloudOutcome outcome = applyCloud(nodeNetwork, detach);
    failures.addAll(outcome.failures());
    return new CloudCleanup(attached, outcome.detached(), undescribed, failures);
  }
}
