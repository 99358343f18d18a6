package org.ipamoperators.egressip.plan;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.ipamoperators.core.address.InvalidAddressException;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.placement.IpDemand;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.placement.PlacementOptions;
import org.ipamoperators.core.placement.PlacementPlan;
import org.ipamoperators.core.placement.PlacementPlanner;
import org.ipamoperators.core.pool.Pool;
import org.ipamoperators.core.pool.PoolProblem;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressIPAMSpec;

/**
 * Decides one reconcile of an EgressIPAM from what the cluster holds: the spec, the opted-in
 * namespaces, the ledger's claims in the IPAM's CIDRs, and the nodes. Pure and deterministic.
 *
 * <p>Per namespace, independently of all others: a written {@code egressips} annotation is the
 * user's (or a migrated) choice and is checked (one address per CIDR, in order, usable, not held by
 * anyone else) and claimed; a namespace without it keeps the addresses it claimed but never saw
 * published (a restart between claim and annotation), and gets new ones where it has none. A
 * namespace whose annotation was removed after publication gets new addresses, as the old operator
 * did. One namespace's problem never stops another's. Two namespaces writing the same unclaimed
 * address in one pass: the first by name gets it, the other is told who holds it; likewise between
 * a written address not yet claimed and one the allocator chooses, so no plan serves an address twice.
 */
public final class EgressPlanner {
  private EgressPlanner() {}

  /**
   * A namespace a plan left with nothing to do: it holds exactly {@code addresses}, its annotation
   * names them as written, nothing to claim or release. Its decision is a function of its own state,
   * its own claims and the spec alone (no other namespace, node or claim enters it), so a later plan
   * with the same three reuses it instead of parsing and checking the annotation again.
   */
  public record Settled(NamespaceState state, List<Ip> addresses) {}

  /**
   * What one plan keeps for the next: the spec it was made for, its settled namespaces, and its
   * placement with the inputs it was computed from. A cache of the planner's own results, checked
   * against the new inputs before any reuse; never allocation state (the ledger is), so losing it
   * (a restart) only costs one full plan.
   */
  public record Memory(EgressIPAMSpec spec, Map<String, Settled> settled, List<NodeState> placedNodes,
      List<IpDemand> placedDemands, PlacementOptions placedOptions, PlacementPlan placement) {
    /** Nothing remembered: the next plan is a full one. */
    public static final Memory NONE = new Memory(null, Map.of(), null, null, null, null);
  }

  /**
   * A plan with what it leaves for the next one; {@code reused} namespaces were taken from the
   * previous plan's memory, {@code placementReused} when the placement was.
   */
  public record Result(EgressPlan plan, Memory memory, int reused, boolean placementReused) {}

  /** The full plan: every namespace decided from scratch. */
  public static EgressPlan plan(EgressIPAMSpec spec, List<NamespaceState> namespaces,
      List<ClaimState> claims, List<NodeInfo> nodes, PlacementOptions placementOptions) {
    return plan(Memory.NONE, spec, namespaces, claims, nodes, placementOptions).plan();
  }

  /**
   * The plan, reusing what {@code previous} settled where the inputs a decision depends on are
   * unchanged: a settled namespace whose state and claims are the same is served as before without
   * being parsed or checked; the placement is reused when its nodes and demands are the same. Any
   * other namespace is decided as the full plan decides it, in the same order and against the same
   * taken addresses, so the result equals {@link #plan(EgressIPAMSpec, List, List, List,
   * PlacementOptions)}'s for the same inputs (the property test checks it); a changed spec makes it
   * a full plan.
   */
  public static Result plan(Memory previous, EgressIPAMSpec spec, List<NamespaceState> namespaces,
      List<ClaimState> claims, List<NodeInfo> nodes, PlacementOptions placementOptions) {
    List<PoolProblem> specProblems = validate(spec);
    if (!specProblems.isEmpty()) {
      return new Result(new EgressPlan(specProblems, new TreeMap<>(), List.of(), new TreeMap<>(), new TreeMap<>(),
          PlacementPlanner.plan(List.of(), List.of(), PlacementOptions.DEFAULT), List.of(), List.of(), Map.of()),
          Memory.NONE, 0, false);
    }
    Map<String, Settled> before = previous != null && spec.equals(previous.spec()) ? previous.settled() : Map.of();
    PlanDraft d = new PlanDraft(spec);
    d.takeNodeAddresses(nodes); // addresses nobody may get: nodes' own and other owners' claims
    Map<String, NamespaceState> wanting = new TreeMap<>();
    namespaces.forEach(n -> wanting.put(n.name(), n));
    Map<String, List<ClaimState>> claimsByNamespace = d.takeClaims(claims, wanting.keySet());
    Map<String, Settled> settled = new HashMap<>();
    int reused = 0;
    for (NamespaceState ns : wanting.values()) {
      List<ClaimState> held = claimsByNamespace.getOrDefault(ns.name(), List.of());
      Settled s = before.get(ns.name());
      if (s != null && s.state().equals(ns) && holdsExactly(held, s.addresses())) {
        d.served.put(ns.name(), s.addresses()); // what the full plan decides: planWritten with every address its own
        settled.put(ns.name(), s);
        reused++;
      } else {
        decide(ns, held, d).ifPresent(x -> settled.put(ns.name(), x));
      }
    }
    d.freeReleased();
    Placed placed = place(previous, d, nodes, placementOptions);
    d.problems.sort(Comparator.comparing(NamespaceProblem::namespace));
    EgressPlan plan = new EgressPlan(List.of(), d.toClaim, d.toRelease, d.annotations, d.served, placed.plan(),
        d.problems, d.usage(), placed.cidrOf());
    return new Result(plan, new Memory(spec, settled, placed.nodes(), placed.demands(), placementOptions, placed.plan()),
        reused, placed.reused());
  }

  /** Decides one namespace from scratch; its settled decision when it is left with nothing to do. */
  private static Optional<Settled> decide(NamespaceState ns, List<ClaimState> held, PlanDraft d) {
    int releases = d.toRelease.size();
    if (ns.egressIps() != null && !ns.egressIps().isBlank()) {
      planWritten(ns, held, d);
    } else {
      planUnwritten(ns, held, d);
    }
    List<Ip> ips = d.served.get(ns.name());
    if (ips != null && !d.toClaim.containsKey(ns.name()) && !d.annotations.containsKey(ns.name())
        && d.toRelease.size() == releases && holdsExactly(held, ips)) {
      return Optional.of(new Settled(ns, ips));
    }
    return Optional.empty();
  }

  /** A placement with the inputs it was computed from, and whether the previous plan's was reused. */
  private record Placed(PlacementPlan plan, List<NodeState> nodes, List<IpDemand> demands, Map<Ip, Integer> cidrOf,
      boolean reused) {}

  /** Places the served addresses on the nodes; the previous placement when its nodes and demands are the same. */
  private static Placed place(Memory previous, PlanDraft d, List<NodeInfo> nodes, PlacementOptions options) {
    Map<Ip, Integer> cidrOf = new HashMap<>();
    List<IpDemand> demands = new ArrayList<>();
    d.served.forEach((ns, ips) -> {
      for (int i = 0; i < ips.size(); i++) {
        cidrOf.put(ips.get(i), i);
        demands.add(new IpDemand(ips.get(i), d.cidrs.get(i).labelValue(), ns));
      }
    });
    List<NodeState> nodeStates = new ArrayList<>();
    for (NodeInfo n : nodes) {
      Set<Ip> ours = new HashSet<>();
      n.hosting().stream().filter(ip -> d.cidrIndex(ip) >= 0).forEach(ours::add);
      boolean inGroup = n.selected() && n.topologyValue() != null;
      if (inGroup || !ours.isEmpty()) {
        nodeStates.add(new NodeState(n.name(), inGroup ? n.topologyValue() : null, inGroup && n.eligible(),
            n.capacity(), ours));
      }
    }
    boolean reused = previous != null && previous.placement() != null && options.equals(previous.placedOptions())
        && nodeStates.equals(previous.placedNodes()) && demands.equals(previous.placedDemands());
    PlacementPlan placement = reused ? previous.placement() : PlacementPlanner.plan(nodeStates, demands, options);
    return new Placed(placement, nodeStates, demands, cidrOf, reused);
  }

  /** Whether a namespace's claims are exactly these addresses (each once). */
  private static boolean holdsExactly(List<ClaimState> held, List<Ip> addresses) {
    if (held.size() != addresses.size()) {
      return false;
    }
    for (ClaimState c : held) {
      if (!addresses.contains(c.address())) {
        return false;
      }
    }
    return new HashSet<>(addresses).size() == addresses.size();
  }

  /** A namespace whose annotation names its addresses: check them and claim what is missing. */
  private static void planWritten(NamespaceState ns, List<ClaimState> held, PlanDraft d) {
    Set<Ip> ownClaims = new HashSet<>();
    held.forEach(c -> ownClaims.add(c.address()));
    Optional<List<Ip>> written = checkWritten(ns, ownClaims, d);
    if (written.isEmpty()) {
      return;
    }
    List<Ip> ips = written.get();
    List<Ip> missing = ips.stream().filter(ip -> !ownClaims.contains(ip)).toList();
    // Taken for the rest of the pass, for written and allocated addresses alike.
    missing.forEach(ip -> d.take(ip, "namespace " + ns.name()));
    if (!missing.isEmpty()) {
      d.toClaim.put(ns.name(), missing);
    }
    held.stream().map(ClaimState::address).filter(ip -> !ips.contains(ip)).forEach(d.toRelease::add);
    String normalized = String.join(",", ips.stream().map(Ip::toString).toList());
    if (!normalized.equals(ns.egressIps())) {
      d.annotations.put(ns.name(), normalized);
    }
    d.served.put(ns.name(), ips);
  }

  /** The written addresses when they can be served as written; else empty, the problem recorded. */
  private static Optional<List<Ip>> checkWritten(NamespaceState ns, Set<Ip> ownClaims, PlanDraft d) {
    String[] parts = ns.egressIps().split(",", -1);
    List<Pool> pools = d.pools;
    String expect = "write one address per CIDR, in order: "
        + String.join(",", pools.stream().map(Pool::name).toList());
    if (parts.length != pools.size()) {
      return d.refuse(ns, NamespaceProblem.Reason.INVALID_ANNOTATION,
          "egressips " + quoted(ns.egressIps()) + " has " + parts.length + " address"
          + (parts.length == 1 ? "" : "es") + " for " + pools.size() + " CIDR"
          + (pools.size() == 1 ? "" : "s") + "; " + expect);
    }
    List<Ip> ips = new ArrayList<>();
    for (int i = 0; i < parts.length; i++) {
      Ip ip;
      try {
        ip = Ip.parse(parts[i].trim());
      } catch (InvalidAddressException e) {
        return d.refuse(ns, NamespaceProblem.Reason.INVALID_ANNOTATION,
            "egressips entry " + (i + 1) + " " + quoted(parts[i]) + " is not an IP address; " + expect);
      }
      Pool pool = pools.get(i);
      if (!pool.contains(ip)) {
        return d.refuse(ns, NamespaceProblem.Reason.INVALID_ANNOTATION,
            "egressips entry " + (i + 1) + " " + ip + " is not in CIDR " + pool.name() + "; " + expect);
      }
      Optional<String> unusable = pool.whyUnusable(ip);
      if (unusable.isPresent() && !ownClaims.contains(ip)) {
        return d.refuse(ns, NamespaceProblem.Reason.INVALID_ANNOTATION,
            "egressips entry " + (i + 1) + ": " + unusable.get());
      }
      String holder = d.takenBy.get(ip);
      if (holder != null && !ownClaims.contains(ip)) {
        return d.refuse(ns, NamespaceProblem.Reason.ADDRESS_TAKEN,
            "egressips entry " + (i + 1) + " " + ip + " is held by " + holder);
      }
      ips.add(ip);
    }
    if (new HashSet<>(ips).size() != ips.size()) {
      return d.refuse(ns, NamespaceProblem.Reason.INVALID_ANNOTATION,
          "egressips " + quoted(ns.egressIps()) + " lists an address twice");
    }
    return Optional.of(ips);
  }

  /** A namespace without addresses written: adopt unpublished claims, allocate the rest. */
  private static void planUnwritten(NamespaceState ns, List<ClaimState> held, PlanDraft d) {
    List<Pool> pools = d.pools;
    Ip[] chosen = new Ip[pools.size()];
    for (ClaimState c : held) {
      int idx = d.cidrIndex(c.address());
      if (!c.published() && chosen[idx] == null) {
        chosen[idx] = c.address(); // claimed, never published: a restart in between; keep it
      } else {
        d.toRelease.add(c.address()); // the user removed the annotation: new addresses, as before
        d.releaseAfterPass.add(c.address());
      }
    }
    List<Ip> fresh = new ArrayList<>();
    for (int i = 0; i < pools.size(); i++) {
      if (chosen[i] != null) {
        continue;
      }
      var family = pools.get(i).families().iterator().next();
      Optional<Ip> ip = d.allocators.get(i).allocate(family, d.strategy, ns.name());
      if (ip.isEmpty()) {
        fresh.forEach(f -> d.allocators.get(d.cidrIndex(f)).release(f));
        d.refuse(ns, NamespaceProblem.Reason.CIDR_EXHAUSTED,
            "CIDR " + pools.get(i).name() + " has no free address (" + d.allocators.get(i).capacity(family)
            + " usable, all allocated or reserved); the namespace gets its addresses when one is released");
        return;
      }
      chosen[i] = ip.get();
      fresh.add(ip.get());
    }
    List<Ip> ips = List.of(chosen);
    fresh.forEach(ip -> d.takenBy.put(ip, "namespace " + ns.name())); // a written annotation cannot take it too
    if (!fresh.isEmpty()) {
      d.toClaim.put(ns.name(), fresh);
    }
    d.annotations.put(ns.name(), String.join(",", ips.stream().map(Ip::toString).toList()));
    d.served.put(ns.name(), ips);
  }

  /**
   * A user's value in a message: quoted, and cut to its first 64 characters with its length when
   * longer, so a 100 kB annotation makes a readable Event rather than a huge one.
   */
  static String quoted(String value) {
    if (value == null) {
      return "''";
    }
    return value.length() <= 64 ? "'" + value + "'"
        : "'" + value.substring(0, 64) + "...' (" + value.length() + " characters)";
  }

  static int cidrIndex(List<Pool> pools, Ip ip) {
    for (int i = 0; i < pools.size(); i++) {
      if (pools.get(i).contains(ip)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * What admission cannot check: CIDR semantics, reserved addresses, overlaps. A labelValue shared by
   * two CIDRs is allowed, as the old CRD allowed it: those nodes host both CIDRs' addresses.
   */
  public static List<PoolProblem> validate(EgressIPAMSpec spec) {
    List<PoolProblem> problems = new ArrayList<>();
    if (spec == null) {
      problems.add(new PoolProblem("spec", "spec is missing: add spec.topologyLabel and spec.cidrAssignments"));
      return problems;
    }
    List<CIDRAssignment> cidrs = spec.cidrs();
    if (cidrs.isEmpty()) {
      problems.add(new PoolProblem("cidrAssignments", "cidrAssignments is empty: add at least one CIDR"));
      return problems;
    }
    if (spec.strategy() != null) {
      try {
        AllocationStrategy.valueOf(spec.strategy().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        problems.add(new PoolProblem(spec.strategy(), "strategy must be FIRST_FREE, RANDOM or STICKY"));
      }
    }
    List<IpRange> ranges = new ArrayList<>();
    for (int i = 0; i < cidrs.size(); i++) {
      CIDRAssignment a = cidrs.get(i);
      String at = "cidrAssignments[" + i + "]";
      if (a.cidr() == null) {
        problems.add(new PoolProblem(at, at + ".CIDR is missing"));
        continue;
      }
      for (PoolProblem p : Pool.validate(a.cidr(), List.of(a.cidr()), a.reservedOrEmpty())) {
        problems.add(new PoolProblem(p.value(), at + ": " + p.message()));
      }
      try {
        IpRange r = IpRange.parse(a.cidr());
        if (!r.isCidr()) {
          problems.add(new PoolProblem(a.cidr(), at + ".CIDR '" + a.cidr() + "' needs a prefix length, such as "
              + a.cidr() + (r.first().isIPv4() ? "/32" : "/128")));
        }
        for (int j = 0; j < ranges.size(); j++) {
          if (ranges.get(j) != null && ranges.get(j).overlaps(r)) {
            problems.add(new PoolProblem(a.cidr(), at + ".CIDR " + a.cidr() + " overlaps cidrAssignments["
                + j + "].CIDR " + ranges.get(j).text() + "; one address would belong to two CIDRs"));
          }
        }
        ranges.add(r);
      } catch (InvalidAddressException e) {
        ranges.add(null); // reported above
      }
    }
    return problems;
  }
}
