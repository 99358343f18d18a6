package org.ipamoperators.egressip.plan;

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
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.kube.LabelSelectors;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.failover.FailoverPolicy;
import org.ipamoperators.core.failover.HealthObservation;
import org.ipamoperators.core.failover.NodeCondition;
import org.ipamoperators.core.failover.NodeVerdict;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.placement.PlacementOptions;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.ipamoperators.egressip.network.NetworkWrite;

/**
 * The egress policy, pure: from what was read ({@link EgressInputs}) and the failure history of the
 * previous pass to a decision. It decides node readiness through
 * the failover policy (a recovered node waits out the recovery window), capacity from the node
 * annotation, the IPAM and the cloud, capacity shared with EgressIPAMs named before this one,
 * suspect nodes keeping only what they host, CIDRs whose usage the platform could not read (nothing
 * new is claimed there), addresses the platform sees in use, and the cloud changes that follow the
 * placement. The reconciler only fetches, calls {@link #decide}, and persists.
 */
public final class EgressPolicy {
  public static final String POOL_PREFIX = "egressipam/";
  static final Duration RECOVERY_WINDOW = Duration.ofSeconds(60);

  private EgressPolicy() {}

  public static String pool(String ipam) {
    return POOL_PREFIX + ipam;
  }

  /** Whether the platform is asked about a node: it is selected, or it may still hold our addresses. */
  public static boolean describes(EgressIPAMSpec spec, Map<String, String> labels, boolean hasProviderId) {
    return spec != null && LabelSelectors.matches(spec.nodeSelector(), labels) || hasProviderId;
  }

  /** An EgressIPAM without spec (admission allows it) as the policy reads it: no CIDR, no node. */
  private static final EgressIPAMSpec MISSING = new EgressIPAMSpec(List.of(), "ipam.ipamoperators.org/no-spec",
      new io.fabric8.kubernetes.api.model.LabelSelectorBuilder().withMatchLabels(Map.of(
          "ipam.ipamoperators.org/no-spec", "no-spec")).build(), null, null, null);

  /** The spec's CIDR assignments, none when the spec is missing. */
  public static List<CIDRAssignment> cidrs(EgressIPAMSpec spec) {
    return spec == null ? List.of() : spec.cidrs();
  }

  /** The full decision, nothing reused. */
  public static EgressDecision decide(EgressInputs in, Map<String, Instant> failedBefore, Instant now) {
    return decide(in, failedBefore, now, EgressPlanner.Memory.NONE);
  }

  /**
   * The decision, reusing what the previous one settled where its inputs are unchanged (see {@link
   * EgressPlanner#plan(EgressPlanner.Memory, EgressIPAMSpec, List, List, List, PlacementOptions)}):
   * the same decision as the full one, at a cost that follows what changed.
   */
  public static EgressDecision decide(EgressInputs in, Map<String, Instant> failedBefore, Instant now,
      EgressPlanner.Memory previous) {
    return decide(in, failedBefore, now, previous, Orphans.Watch.NONE);
  }

  /** The decision, with the orphans seen by the previous passes (see {@link Orphans}). */
  public static EgressDecision decide(EgressInputs in, Map<String, Instant> failedBefore, Instant now,
      EgressPlanner.Memory previous, Orphans.Watch orphansBefore) {
    EgressIPAMSpec spec = in.spec() == null ? MISSING : in.spec(); // the planner reports a missing spec
    Map<String, EgressPlanner.Settled> settledBefore = previous == null || in.spec() == null
        || !in.spec().equals(previous.spec()) ? Map.of() : previous.settled();
    Claims claims = claims(in, pool(in.ipam()), settledBefore);
    Health health = health(in, spec, failedBefore, now);
    List<IpRange> ourRanges = parsableCidrs(spec);
    Nodes nodes = nodes(in, spec, health.verdicts(), claims, ourRanges);
    List<IpRange> blind = inUse(in, spec, claims, nodes);

    EgressPlanner.Result result = EgressPlanner.plan(previous, in.spec(), in.namespaces(), claims.states(),
        nodes.infos(), PlacementOptions.DEFAULT);
    EgressPlan plan = result.plan();
    Orphans.Result orphans = orphans(in, plan, ourRanges, nodes.described(), orphansBefore, now);
    Duration review = nextReview(health.verdicts(), now);
    if (orphans.review() != null && (review == null || orphans.review().compareTo(review) < 0)) {
      review = orphans.review();
    }
    return new EgressDecision(plan, health.verdicts(), health.history(), nodes.infos(), nodes.attached(),
        nodes.attachmentsUnknown(), deferred(plan, blind), nodes.platformProblems(), nodes.capacityProblems(), review,
        result.memory(), result.reused(), result.placementReused(), orphans);
  }

  /** The ledger as the planner sees it: ours, other IPAMs' and other owners' claims. */
  private record Claims(Set<Ip> ours, Set<Ip> otherIpams, List<ClaimState> states) {}

  /**
   * Claims: ours (published from the claim's label or the namespace's record), others', and the
   * addresses of IPAMs named before this one, which use the capacity of the nodes that carry them
   * (only those named before, so two IPAMs that place on one node at once settle in one round).
   */
  private static Claims claims(EgressInputs in, String pool, Map<String, EgressPlanner.Settled> settledBefore) {
    Map<String, Collection<Ip>> publishedIn = new HashMap<>();
    for (NamespaceState ns : in.namespaces()) {
      if (ns.published() != null) {
        EgressPlanner.Settled s = settledBefore.get(ns.name());
        // Settled and published as written: its record names its addresses, no need to parse it again.
        publishedIn.put(ns.name(), s != null && s.state().equals(ns) && ns.published().equals(ns.egressIps())
            ? s.addresses() : parseAll(ns.published()));
      }
    }
    Set<Ip> ours = new HashSet<>();
    Set<Ip> otherIpams = new HashSet<>();
    List<ClaimState> states = new ArrayList<>(in.claims().size());
    for (ClaimFact c : in.claims()) {
      if (pool.equals(c.pool())) {
        ours.add(c.address());
        boolean published = c.publishedLabel()
            || publishedIn.getOrDefault(c.ownerName(), List.of()).contains(c.address());
        states.add(new ClaimState(c.address(), c.ownerName(), null, published, c.created()));
      } else {
        states.add(new ClaimState(c.address(), null, c.ownerDescription(), false, c.created()));
        if (c.pool() != null && c.pool().startsWith(POOL_PREFIX) && c.pool().compareTo(pool) < 0) {
          otherIpams.add(c.address());
        }
      }
    }
    return new Claims(ours, otherIpams, states);
  }

  /** Each node's verdict, and the failures to remember for the next pass. */
  private record Health(Map<String, NodeVerdict> verdicts, Map<String, Instant> history) {}

  /**
   * Readiness: the Ready condition only tells a node's latest transition; the failure before a
   * recovery is remembered, so a flapping node's addresses move at most once per window.
   */
  private static Health health(EgressInputs in, EgressIPAMSpec spec, Map<String, Instant> failedBefore,
      Instant now) {
    Duration grace = Duration.ofSeconds(spec.failoverGraceSeconds() == null ? 10 : spec.failoverGraceSeconds());
    List<HealthObservation> observations = new ArrayList<>();
    for (NodeFacts n : in.nodes()) {
      Instant failedAt = failedBefore.get(n.name());
      if (failedAt != null) {
        observations.add(new HealthObservation(n.name(), failedAt.minus(grace), false));
      }
      observations.add(n.readiness());
    }
    Map<String, NodeVerdict> verdicts = new FailoverPolicy(grace, RECOVERY_WINDOW).evaluate(observations, now);
    Map<String, Instant> history = new HashMap<>(failedBefore);
    Set<String> registering = new HashSet<>();
    in.nodes().stream().filter(n -> !n.readiness().ready() && Instant.EPOCH.equals(n.readiness().at()))
        .forEach(n -> registering.add(n.name()));
    verdicts.forEach((node, v) -> {
      if (v.condition() == NodeCondition.FAILED) {
        if (!registering.contains(node)) {
          // a node that never reported Ready (just registered) has not failed: when it becomes
          // Ready it is a new node, not one recovering, and takes addresses at once
          history.putIfAbsent(node, v.since());
        }
      } else if (v.condition() == NodeCondition.HEALTHY) {
        history.remove(node);
      }
    });
    history.keySet().retainAll(verdicts.keySet());
    return new Health(verdicts, history);
  }

  /** The nodes as the planner sees them, and what the platform said of them. */
  private record Nodes(List<NodeInfo> infos, List<String> platformProblems, Map<String, String> capacityProblems,
      Set<Ip> attached, boolean attachmentsUnknown, Set<Ip> onInterfaces, List<Orphans.Described> described) {}

  private static Nodes nodes(EgressInputs in, EgressIPAMSpec spec, Map<String, NodeVerdict> verdicts, Claims claims,
      List<IpRange> ourRanges) {
    Nodes out = new Nodes(new ArrayList<>(), new ArrayList<>(), new TreeMap<>(), new HashSet<>(), false,
        new HashSet<>(), new ArrayList<>());
    boolean unknown = false;
    for (NodeFacts n : in.nodes()) {
      unknown |= node(n, in.platform(), spec, verdicts.get(n.name()), claims, ourRanges, out);
    }
    return new Nodes(out.infos(), out.platformProblems(), out.capacityProblems(), out.attached(), unknown,
        out.onInterfaces(), out.described());
  }

  /** Adds one node to {@code out}; true when the platform could not tell what is attached to it. */
  private static boolean node(NodeFacts n, EgressInputs.PlatformNetwork platform, EgressIPAMSpec spec,
      NodeVerdict verdict, Claims claims, List<IpRange> ourRanges, Nodes out) {
    boolean selected = LabelSelectors.matches(spec.nodeSelector(), n.labels());
    boolean eligible = !verdict.failed();
    boolean unknown = false;
    int capacity = capacity(n, spec, out.capacityProblems());
    Set<Ip> hosted = n.sdnHosting();
    Set<Ip> onNode = hosted; // every egress address the node carries, whichever IPAM placed it
    if (platform.attaches()) {
      // On a cloud the interface is the truth of what a node hosts: our claimed addresses on it.
      hosted = Set.of();
      NodeFacts.CloudView cloud = n.cloud();
      if (cloud != null && cloud.problem() != null) {
        // A node the platform cannot describe hosts nothing new; its addresses move elsewhere.
        eligible = false;
        unknown = cloud.unknown();
        if (selected) {
          out.platformProblems().add(cloud.problem());
        }
      } else if (cloud != null) {
        if (platform.reportsCapacity()) {
          capacity = Math.min(capacity, cloud.capacity());
        }
        hosted = cloud.secondaries().stream().filter(claims.ours()::contains)
            .filter(ip -> ourRanges.stream().anyMatch(r -> r.contains(ip))).collect(Collectors.toSet());
        out.attached().addAll(hosted);
        out.onInterfaces().addAll(cloud.secondaries());
        onNode = cloud.secondaries();
        Set<Ip> marked = new HashSet<>(cloud.marked());
        marked.retainAll(cloud.secondaries());
        out.described().add(new Orphans.Described(n.name(), marked));
      }
    }
    // A node's capacity is shared by every EgressIPAM that selects it.
    long othersHere = onNode.stream().filter(claims.otherIpams()::contains).count();
    if (capacity != NodeState.UNLIMITED) {
      capacity = (int) Math.max(0, capacity - othersHere);
    }
    if (verdict.condition() == NodeCondition.SUSPECT) {
      // Not ready, within the grace period: it keeps what it hosts and takes nothing new.
      long held = hosted.stream().filter(ip -> ourRanges.stream().anyMatch(r -> r.contains(ip))).count();
      capacity = (int) Math.min(capacity, held);
    }
    out.infos().add(new NodeInfo(n.name(), n.labels().get(spec.topologyLabel()), selected, eligible, capacity,
        n.ownAddresses(), hosted));
    return unknown;
  }

  /**
   * What the platform sees in use in each CIDR is taken (added to the claims); returns the CIDRs it
   * could not read (blind: nothing new is claimed there), reported in the nodes' platform problems.
   */
  private static List<IpRange> inUse(EgressInputs in, EgressIPAMSpec spec, Claims claims, Nodes nodes) {
    List<IpRange> blind = new ArrayList<>();
    if (!in.platform().seesForeignAddresses()) {
      return blind;
    }
    Set<Ip> annotated = new HashSet<>();
    in.namespaces().forEach(w -> annotated.addAll(parseAll(w.egressIps())));
    for (CIDRAssignment c : spec.cidrs()) {
      EgressInputs.InUse u = in.inUse().get(c.cidr());
      if (u == null) {
        continue; // an unparsable CIDR: the spec check reports it
      }
      if (u.problem() != null) {
        nodes.platformProblems().add(u.problem());
        blind.add(IpRange.parse(c.cidr()));
        continue;
      }
      for (Ip ip : u.addresses()) {
        if (claims.ours().contains(ip)) {
          continue; // attached by us: in use, and ours
        }
        if (nodes.onInterfaces().contains(ip) && annotated.contains(ip)) {
          continue; // on a node and named by one of our namespaces: the old operator's, taken over
        }
        claims.states().add(new ClaimState(ip, null, "the platform (in use in subnet " + c.cidr() + ")", false, null));
      }
    }
    return blind;
  }

  /** An address is only new once the platform said what is in use: a namespace to claim in a blind CIDR waits. */
  private static Map<String, IpRange> deferred(EgressPlan plan, List<IpRange> blind) {
    Map<String, IpRange> deferred = new TreeMap<>();
    for (String ns : plan.served().keySet()) {
      List<Ip> toClaim = plan.toClaim().getOrDefault(ns, List.of());
      Optional<IpRange> unknown = blind.stream().filter(r -> toClaim.stream().anyMatch(r::contains)).findFirst();
      unknown.ifPresent(r -> deferred.put(ns, r));
    }
    return deferred;
  }

  /**
   * The orphans of this pass, from the plan (so the incremental plan, equal to the full one, gives
   * the same): only with a usable spec, on a cloud, on the nodes the cloud described.
   */
  private static Orphans.Result orphans(EgressInputs in, EgressPlan plan, List<IpRange> ourRanges,
      List<Orphans.Described> described, Orphans.Watch before, Instant now) {
    if (!plan.specValid() || !in.platform().attaches() || described.isEmpty()) {
      return new Orphans.Result(Orphans.Watch.start(before.grace()), List.of(), null);
    }
    Set<Ip> claimed = new HashSet<>();
    in.claims().forEach(c -> claimed.add(c.address()));
    Set<Ip> used = new HashSet<>();
    plan.served().values().forEach(used::addAll);
    plan.toClaim().values().forEach(used::addAll);
    used.addAll(plan.toRelease());
    plan.annotations().values().forEach(a -> used.addAll(parseAll(a)));
    plan.placement().assignments().values().forEach(used::addAll);
    for (NamespaceState ns : in.namespaces()) {
      used.addAll(parseAll(ns.egressIps()));
      used.addAll(parseAll(ns.published()));
    }
    return Orphans.watch(before, described, ourRanges, claimed, used, now);
  }

  /**
   * The cloud changes that carry out the placement for the namespaces actually served: moves and
   * attachments of served addresses, every detachment, and (where the platform attaches) a
   * confirmation of each address that stays, so an interface that lost it, or holds it untagged
   * from the old operator, is put right.
   */
  public static List<AddressChange> cloudChanges(EgressPlan plan, Set<Ip> served, boolean attaches) {
    List<AddressChange> changes = new ArrayList<>(AddressChange.of(plan.placement()).stream()
        .filter(c -> c.kind() == AddressChange.Kind.DETACH || served.contains(c.address())).toList());
    if (attaches) {
      Set<Ip> changing = changes.stream().map(AddressChange::address).collect(Collectors.toSet());
      plan.placement().assignments().forEach((node, ips) -> ips.stream()
          .filter(ip -> served.contains(ip) && !changing.contains(ip))
          .forEach(ip -> changes.add(AddressChange.attach(ip, node))));
    }
    return changes;
  }

  /**
   * What the cluster network should show for the served namespaces: with one IPv4 CIDR and no
   * cloud, SDN picks the node itself from egressCIDRs, as the old operator did; on a cloud, or with
   * several CIDRs, each node gets the addresses placed on it.
   */
  public static NetworkWrite networkWrite(String ipam, EgressIPAMSpec spec, EgressPlan plan,
      Map<String, List<Ip>> served, Set<String> cleared, List<NodeInfo> nodes, boolean needsCloudApi) {
    List<IpRange> ranges = spec.cidrs().stream().map(c -> IpRange.parse(c.cidr())).toList();
    Set<String> labelValues = spec.cidrs().stream().map(CIDRAssignment::labelValue).collect(Collectors.toSet());
    Map<String, Set<Ip>> hosting = new HashMap<>();
    Map<String, IpRange> cidrMode = new HashMap<>();
    Set<String> assignable = new HashSet<>();
    Set<Ip> servedIps = new HashSet<>();
    served.values().forEach(servedIps::addAll);
    boolean useCidrMode = ranges.size() == 1 && ranges.get(0).first().isIPv4() && !needsCloudApi;
    for (NodeInfo n : nodes) {
      if (n.selected() && n.topologyValue() != null && labelValues.contains(n.topologyValue())) {
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
    return new NetworkWrite(ipam, ranges, served, cleared, hosting, cidrMode, assignable);
  }

  /** Capacity from the node annotation, else the IPAM's; an unusable annotation is reported, not ignored. */
  static int capacity(NodeFacts n, EgressIPAMSpec spec, Map<String, String> problems) {
    String a = n.capacityAnnotation();
    if (a != null) {
      try {
        int value = Integer.parseInt(a.trim());
        if (value >= 0) {
          return value;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      problems.put(n.name(), "node " + n.name() + ": capacity annotation " + EgressPlanner.quoted(a) + " is not a whole number >= 0; "
          + (spec.nodeCapacity() == null ? "no limit" : "the EgressIPAM's nodeCapacity " + spec.nodeCapacity())
          + " is used instead");
    }
    return spec.nodeCapacity() == null ? NodeState.UNLIMITED : spec.nodeCapacity();
  }

  /**
   * The addresses inside an IPAM's CIDRs that another pool or controller holds (an overlapping IPAM's): never
   * the IPAM's to write or clear on the network.
   */
  public static Set<Ip> foreignIn(String ipam, EgressIPAMSpec spec, List<ClaimFact> claims) {
    List<IpRange> ranges = parsableCidrs(spec);
    String own = pool(ipam);
    Set<Ip> out = new HashSet<>();
    for (ClaimFact c : claims) {
      if (!own.equals(c.pool()) && ranges.stream().anyMatch(r -> r.contains(c.address()))) {
        out.add(c.address());
      }
    }
    return out;
  }

  /** The spec's CIDRs that parse; the spec check reports the others. */
  public static List<IpRange> parsableCidrs(EgressIPAMSpec spec) {
    List<IpRange> out = new ArrayList<>();
    for (CIDRAssignment c : cidrs(spec)) {
      try {
        out.add(IpRange.parse(c.cidr()));
      } catch (RuntimeException e) {
        // reported by EgressPlanner.validate
      }
    }
    return out;
  }

  private static Set<Ip> parseAll(String commaSeparated) {
    Set<Ip> out = new HashSet<>();
    if (commaSeparated != null) {
      for (String part : commaSeparated.split(",")) {
        try {
          out.add(Ip.parse(part.trim()));
        } catch (RuntimeException e) {
          // reported by the planner
        }
      }
    }
    return out;
  }

  static Duration nextReview(Map<String, NodeVerdict> verdicts, Instant now) {
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
}
