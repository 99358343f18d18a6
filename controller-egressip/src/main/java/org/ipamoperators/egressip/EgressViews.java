package org.ipamoperators.egressip;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.NetNamespace;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.GroupVersionKind;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.kube.OwnWrites;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPBlockEntry;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeNetworkException;
import org.ipamoperators.core.spi.NodeRef;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.network.OvnWriter;
import org.ipamoperators.egressip.network.SdnWriter;
import org.ipamoperators.egressip.plan.ClaimFact;
import org.ipamoperators.egressip.plan.EgressInputs;
import org.ipamoperators.egressip.plan.EgressPolicy;
import org.ipamoperators.egressip.plan.NodeFacts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the EgressIPAM controller reads, and only through here: its informers (each keeping only the
 * fields used, indexed by what a pass looks up), with our own writes over them until the informers show
 * them ({@link OwnWrites}), and each object parsed once per resourceVersion. The observe step of a
 * pass; nothing here writes to the cluster.
 */
final class EgressViews {
  private static final Logger LOG = LoggerFactory.getLogger(EgressViews.class);
  private static final String BY_IPAM = "egressipam";
  private static final String BY_EGRESS_IP = "egressip";
  /** How long our writes show over an informer that has not brought them back (one lagging longer is resynced). */
  private static final java.time.Duration SHOWN_FOR = java.time.Duration.ofSeconds(30);

  private final KubernetesClient client;
  final OwnWrites<Namespace> namespacesWritten = OwnWrites.patched(Trimmed::namespace, SHOWN_FOR);
  final OwnWrites<IPClaim> claimsWritten = OwnWrites.created(Trimmed::claim, SHOWN_FOR);
  final OwnWrites<IPBlock> blocksWritten = OwnWrites.created(Trimmed::block, SHOWN_FOR);
  private final OwnWrites<HostSubnet> hostSubnetsWritten = OwnWrites.patched(Trimmed::hostSubnet, SHOWN_FOR);
  private final OwnWrites<NetNamespace> netNamespacesWritten = OwnWrites.patched(Trimmed::netNamespace, SHOWN_FOR);
  private final OwnWrites<GenericKubernetesResource> egressIpsWritten =
      OwnWrites.created(OvnWriter::trimmed, SHOWN_FOR);
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
  record ParsedSubnet(String version, Set<Ip> hosting, Ip hostIp) {}

  EgressViews(KubernetesClient client) {
    this.client = client;
  }

  /** The informers, created once by the controller's event-source preparation. */
  List<EventSource<?, EgressIPAM>> sources(EventSourceContext<EgressIPAM> context, EventRecorder events) {
    dangling = new DanglingReferences(events, this::namespace,
        ipam -> context.getPrimaryCache().get(new ResourceID(ipam)).isPresent());
    namespaceSource(context);
    nodeSource(context);
    claimSource(context);
    blockSource(context);
    List<EventSource<?, EgressIPAM>> sources = new ArrayList<>(List.of(namespaces, nodes, claims, blocks));
    sdnSources(context, sources);
    ovnSource(context, sources);
    return sources;
  }

  private void namespaceSource(EventSourceContext<EgressIPAM> context) {
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
  }

  private void nodeSource(EventSourceContext<EgressIPAM> context) {
    // Node heartbeats change nothing the policy reads (review H5).
    nodes = new InformerEventSource<>(InformerEventSourceConfiguration.from(Node.class, EgressIPAM.class)
        .withItemStore(new TransformingItemStore<>(Trimmed::node))
        .withOnUpdateFilter(Trimmed::nodeChanged)
        .withSecondaryToPrimaryMapper(n -> allIpams(context)).build(), context);
  }

  private void claimSource(EventSourceContext<EgressIPAM> context) {
    claims = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPClaim.class, EgressIPAM.class)
        .withItemStore(new TransformingItemStore<>(Trimmed::claim))
        .withSecondaryToPrimaryMapper(c -> {
          String p = c.getSpec() == null || c.getSpec().pool() == null ? "" : c.getSpec().pool();
          return p.startsWith(EgressPolicy.POOL_PREFIX)
              ? Set.of(new ResourceID(p.substring(EgressPolicy.POOL_PREFIX.length())))
              : allIpams(context); // another controller's claim may free or take our addresses
        }).build(), context);
  }

  private void blockSource(EventSourceContext<EgressIPAM> context) {
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
  }

  /**
   * The network's own objects, where the cluster serves them, so a hand edit or another tool's write is
   * repaired at once rather than at the next resync. Our own writes come back as events too; they end in
   * a pass that finds nothing to do.
   */
  private void sdnSources(EventSourceContext<EgressIPAM> context, List<EventSource<?, EgressIPAM>> sources) {
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
  }

  private void ovnSource(EventSourceContext<EgressIPAM> context, List<EventSource<?, EgressIPAM>> sources) {
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
  }

  private static Set<ResourceID> allIpams(EventSourceContext<EgressIPAM> context) {
    return context.getPrimaryCache().list().map(ResourceID::fromResource).collect(Collectors.toSet());
  }

  private static Map<String, String> annotations(HasMetadata o) {
    return EgressFacts.annotations(o);
  }

  /**
   * A block the ledger wrote, as it answered. The ledger deletes a block whose last entry it released and
   * then hands over the block as it was read, emptied: recorded as a deletion, so the view hides the block
   * until the informer shows it gone (as a write of the version read it would count as already seen, and
   * the informer's copy with the released entries would be read, and parsed, as current).
   */
  void wroteBlock(IPBlock b) {
    if (b.entries().isEmpty()) {
      blocksWritten.deleted(b.getMetadata().getName(), b.getMetadata().getResourceVersion());
    } else {
      blocksWritten.wrote(b);
    }
  }

  /** Every node as the informer last saw it. */
  List<Node> nodes() {
    return nodes.list(n -> true).toList();
  }

  private static <T extends HasMetadata> Map<String, T> view(InformerEventSource<T, EgressIPAM> source,
      Predicate<T> filter, OwnWrites<T> written, Collection<T> cached) {
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

  Namespace namespace(String name) {
    return namespacesWritten.view(name, namespaces.get(new ResourceID(name)).orElse(null));
  }

  Map<String, Namespace> optedIn(String ipam) {
    Predicate<Namespace> names = ns -> EgressFacts.optsIn(ns, ipam);
    return view(namespaces, names, namespacesWritten, namespaces.byIndex(BY_IPAM, ipam));
  }

  Collection<HostSubnet> hostSubnetView() {
    if (hostSubnets == null) {
      return client.resources(HostSubnet.class).list().getItems();
    }
    return view(hostSubnets, h -> true, hostSubnetsWritten, hostSubnets.list(h -> true).toList()).values();
  }

  NetNamespace netNamespace(String name) {
    if (netNamespaces == null) {
      return client.resources(NetNamespace.class).withName(name).get();
    }
    return netNamespacesWritten.view(name, netNamespaces.get(new ResourceID(name)).orElse(null));
  }

  /** This IPAM's EgressIPs: the informer's and our writes it has not shown yet (no informer: listed). */
  OvnWriter.View egressIpView() {
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
    return egressIpsWritten.isEcho(e.getMetadata().getName(), e);
  }

  /** A HostSubnet the API server no longer has (its node was deleted): hidden until the informer agrees. */
  void hostSubnetGone(HostSubnet last) {
    hostSubnetsWritten.deleted(last.getMetadata().getName(), last.getMetadata().getResourceVersion());
  }

  void wroteNetworkObject(HasMetadata o) {
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
  List<ClaimFact> claimFacts(String ipam, Map<Ip, HeldAddress> ours) {
    Map<String, IPClaim> all = view(claims, c -> true, claimsWritten, claims.list(c -> true).toList());
    List<ClaimFact> out = new ArrayList<>(all.size());
    String pool = EgressPolicy.pool(ipam);
    for (IPClaim c : all.values()) {
      String name = c.getMetadata().getName();
      String version = c.getMetadata().getResourceVersion();
      ParsedClaim p = parsed.get(name);
      if (p == null || !Objects.equals(p.version(), version)) {
        p = new ParsedClaim(version, EgressFacts.claim(c));
        parsed.put(name, p);
      }
      if (p.fact() == null) {
        continue;
      }
      out.add(p.fact());
      if (pool.equals(p.fact().pool())) {
        ours.put(p.fact().address(), new HeldAddress(p.fact().address(), p.fact().ownerName(),
            c.getMetadata().getLabels() != null && "manual".equals(c.getMetadata().getLabels().get(EgressIPAMReconciler.LABEL_ORIGIN)), c));
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
          ours.put(f.address(), new HeldAddress(f.address(), f.ownerName(), e != null && "manual".equals(e.origin()), null));
        }
      }
    }
    if (parsedBlocks.size() > allBlocks.size() + 1024) {
      parsedBlocks.keySet().retainAll(allBlocks.keySet());
    }
    return out;
  }

  ParsedSubnet parsedSubnet(HostSubnet h) {
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


  /** Namespace to the given addresses its NetNamespace shows (the informer's view with our writes over it). */
  Map<String, Set<Ip>> netNamespacesShowing(Set<Ip> addresses) {
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


  /** Each node as the planner sees it (the cloud asked only where we attach): labels, readiness, SDN hosting and, where we attach, its interface. */
  List<NodeFacts> nodeFacts(EgressIPAM ipam, NodeNetwork nodeNetwork, boolean attaches,
      List<Node> allNodes, Collection<HostSubnet> subnets) {
    Map<String, Set<Ip>> sdnHosting = new HashMap<>();
    Map<String, Ip> hostIps = new HashMap<>();
    for (HostSubnet h : subnets) {
      ParsedSubnet p = parsedSubnet(h);
      sdnHosting.put(h.getMetadata().getName(), p.hosting());
      if (p.hostIp() != null) {
        hostIps.put(h.getMetadata().getName(), p.hostIp());
      }
    }
    List<NodeFacts> out = new ArrayList<>(allNodes.size());
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
      out.add(EgressFacts.node(n, hostIps.get(nodeName), sdnHosting.getOrDefault(nodeName, Set.of()), cloud));
    }
    return out;
  }

  /** Per CIDR, the addresses the platform sees in use (or why it could not tell). */
  static Map<String, EgressInputs.InUse> inUse(EgressIPAM ipam, NodeNetwork nodeNetwork) {
    Map<String, EgressInputs.InUse> inUse = new HashMap<>();
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
    return inUse;
  }
}
