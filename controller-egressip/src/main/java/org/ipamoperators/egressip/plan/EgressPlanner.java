package org.ipamoperators.egressip.plan;

import java.math.BigInteger;
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
import org.ipamoperators.core.allocation.Allocator;
import org.ipamoperators.core.allocation.AllocatorOptions;
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
    List<CIDRAssignment> cidrs = spec.cidrs();
    List<Pool> pools = new ArrayList<>();
    List<Allocator> allocators = new ArrayList<>();
    AllocationStrategy strategy = spec.strategy() == null ? AllocationStrategy.FIRST_FREE
        : AllocationStrategy.valueOf(spec.strategy());
    for (int i = 0; i < cidrs.size(); i++) {
      Pool p = Pool.of(cidrs.get(i).cidr(), List.of(cidrs.get(i).cidr()), cidrs.get(i).reservedOrEmpty());
      pools.add(p);
      allocators.add(Allocator.create(p, AllocatorOptions.of(strategy)));
    }

    // Addresses nobody may get: nodes' own addresses and other owners' claims.
    Map<Ip, String> takenBy = new HashMap<>();
    for (NodeInfo n : nodes) {
      for (Ip ip : n.primaryAddresses()) {
        int c = cidrIndex(pools, ip);
        if (c >= 0) {
          allocators.get(c).claim(ip);
          takenBy.put(ip, "node " + n.name() + " (its own address)");
        }
      }
    }
    Map<String, NamespaceState> wanting = new TreeMap<>();
    namespaces.forEach(n -> wanting.put(n.name(), n));
    List<Ip> toRelease = new ArrayList<>();
    Map<String, List<ClaimState>> claimsByNamespace = new TreeMap<>();
    List<ClaimState> ordered = new ArrayList<>(claims);
    ordered.sort(Comparator.comparing(ClaimState::address));
    for (ClaimState c : ordered) {
      int idx = cidrIndex(pools, c.address());
      if (!c.ours()) {
        if (idx >= 0) {
          allocators.get(idx).claim(c.address());
          takenBy.put(c.address(), c.foreignOwner());
        }
        continue;
      }
      if (idx < 0 || !wanting.containsKey(c.namespace())) {
        toRelease.add(c.address()); // CIDR removed from the spec, or the namespace left
        if (idx >= 0) {
          // Break before make: not given to another namespace in the pass that releases it. Still on an
          // interface, the release waits for its detach, and a new owner planned on it now would keep the
          // placement from ever detaching it.
          allocators.get(idx).claim(c.address());
          takenBy.put(c.address(), "namespace " + c.namespace() + " (being released)");
        }
        continue;
      }
      allocators.get(idx).claim(c.address());
      takenBy.put(c.address(), "namespace " + c.namespace());
      claimsByNamespace.computeIfAbsent(c.namespace(), k -> new ArrayList<>()).add(c);
    }

    TreeMap<String, List<Ip>> toClaim = new TreeMap<>();
    TreeMap<String, String> annotations = new TreeMap<>();
    TreeMap<String, List<Ip>> served = new TreeMap<>();
    List<NamespaceProblem> problems = new ArrayList<>();
    List<Ip> releaseAfterPass = new ArrayList<>();
    Map<String, Settled> settled = new HashMap<>();
    int reused = 0;
    for (NamespaceState ns : wanting.values()) {
      List<ClaimState> held = claimsByNamespace.getOrDefault(ns.name(), List.of());
      Settled s = before.get(ns.name());
      if (s != null && s.state().equals(ns) && holdsExactly(held, s.addresses())) {
        served.put(ns.name(), s.addresses()); // what the full plan decides: planWritten with every address its own
        settled.put(ns.name(), s);
        reused++;
        continue;
      }
      int releases = toRelease.size();
      if (ns.egressIps() != null && !ns.egressIps().isBlank()) {
        planWritten(ns, held, pools, allocators, takenBy, toClaim, annotations, served, toRelease, problems);
      } else {
        planUnwritten(ns, held, pools, allocators, strategy, takenBy, toClaim, annotations, served, toRelease,
            releaseAfterPass, problems);
      }
      List<Ip> ips = served.get(ns.name());
      if (ips != null && !toClaim.containsKey(ns.name()) && !annotations.containsKey(ns.name())
          && toRelease.size() == releases && holdsExactly(held, ips)) {
        settled.put(ns.name(), new Settled(ns, ips));
      }
    }
    for (Ip ip : releaseAfterPass) {
      allocators.get(cidrIndex(pools, ip)).release(ip);
    }

    Map<Ip, Integer> cidrOf = new HashMap<>();
    List<IpDemand> demands = new ArrayList<>();
    served.forEach((ns, ips) -> {
      for (int i = 0; i < ips.size(); i++) {
        cidrOf.put(ips.get(i), i);
        demands.add(new IpDemand(ips.get(i), cidrs.get(i).labelValue(), ns));
      }
    });
    List<NodeState> nodeStates = new ArrayList<>();
    for (NodeInfo n : nodes) {
      Set<Ip> ours = new HashSet<>();
      n.hosting().stream().filter(ip -> cidrIndex(pools, ip) >= 0).forEach(ours::add);
      boolean inGroup = n.selected() && n.topologyValue() != null;
      if (!inGroup && ours.isEmpty()) {
        continue;
      }
      nodeStates.add(new NodeState(n.name(), inGroup ? n.topologyValue() : null,
          inGroup && n.eligible(), n.capacity(), ours));
    }
    boolean placementReused = previous != null && previous.placement() != null
        && placementOptions.equals(previous.placedOptions()) && nodeStates.equals(previous.placedNodes())
        && demands.equals(previous.placedDemands());
    PlacementPlan placement = placementReused ? previous.placement()
        : PlacementPlanner.plan(nodeStates, demands, placementOptions);

    List<EgressPlan.CidrUsage> usage = new ArrayList<>();
    for (int i = 0; i < pools.size(); i++) {
      Allocator a = allocators.get(i);
      var family = pools.get(i).families().iterator().next();
      BigInteger allocated = BigInteger.ZERO;
      for (List<Ip> ips : served.values()) {
        if (ips.size() > i && pools.get(i).contains(ips.get(i))) {
          allocated = allocated.add(BigInteger.ONE);
        }
      }
      usage.add(new EgressPlan.CidrUsage(cidrs.get(i).cidr(), a.capacity(family), allocated,
          a.freeCount(family)));
    }
    problems.sort(Comparator.comparing(NamespaceProblem::namespace));
    EgressPlan plan = new EgressPlan(List.of(), toClaim, toRelease, annotations, served, placement, problems, usage,
        cidrOf);
    return new Result(plan, new Memory(spec, settled, nodeStates, demands, placementOptions, placement), reused,
        placementReused);
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
  private static void planWritten(NamespaceState ns, List<ClaimState> held, List<Pool> pools,
      List<Allocator> allocators, Map<Ip, String> takenBy, Map<String, List<Ip>> toClaim, Map<String, String> annotations,
      Map<String, List<Ip>> served, List<Ip> toRelease, List<NamespaceProblem> problems) {
    String[] parts = ns.egressIps().split(",", -1);
    String expect = "write one address per CIDR, in order: "
        + String.join(",", pools.stream().map(Pool::name).toList());
    if (parts.length != pools.size()) {
      problems.add(new NamespaceProblem(ns.name(), NamespaceProblem.Reason.INVALID_ANNOTATION,
          "egressips " + quoted(ns.egressIps()) + " has " + parts.length + " address"
          + (parts.length == 1 ? "" : "es") + " for " + pools.size() + " CIDR"
          + (pools.size() == 1 ? "" : "s") + "; " + expect));
      return;
    }
    Set<Ip> ownClaims = new HashSet<>();
    held.forEach(c -> ownClaims.add(c.address()));
    List<Ip> ips = new ArrayList<>();
    for (int i = 0; i < parts.length; i++) {
      String text = parts[i].trim();
      Ip ip;
      try {
        ip = Ip.parse(text);
      } catch (InvalidAddressException e) {
        problems.add(new NamespaceProblem(ns.name(), NamespaceProblem.Reason.INVALID_ANNOTATION,
            "egressips entry " + (i + 1) + " " + quoted(parts[i]) + " is not an IP address; " + expect));
        return;
      }
      Pool pool = pools.get(i);
      if (!pool.contains(ip)) {
        problems.add(new NamespaceProblem(ns.name(), NamespaceProblem.Reason.INVALID_ANNOTATION,
            "egressips entry " + (i + 1) + " " + ip + " is not in CIDR " + pool.name() + "; " + expect));
        return;
      }
      Optional<String> unusable = pool.whyUnusable(ip);
      if (unusable.isPresent() && !ownClaims.contains(ip)) {
        problems.add(new NamespaceProblem(ns.name(), NamespaceProblem.Reason.INVALID_ANNOTATION,
            "egressips entry " + (i + 1) + ": " + unusable.get()));
        return;
      }
      String holder = takenBy.get(ip);
      if (holder != null && !ownClaims.contains(ip)) {
        problems.add(new NamespaceProblem(ns.name(), NamespaceProblem.Reason.ADDRESS_TAKEN,
            "egressips entry " + (i + 1) + " " + ip + " is held by " + holder));
        return;
      }
      ips.add(ip);
    }
    if (new HashSet<>(ips).size() != ips.size()) {
      problems.add(new NamespaceProblem(ns.name(), NamespaceProblem.Reason.INVALID_ANNOTATION,
          "egressips " + quoted(ns.egressIps()) + " lists an address twice"));
      return;
    }
    List<Ip> missing = ips.stream().filter(ip -> !ownClaims.contains(ip)).toList();
    for (Ip ip : missing) {
      // Taken for the rest of the pass, for written and allocated addresses alike.
      takenBy.put(ip, "namespace " + ns.name());
      allocators.get(cidrIndex(pools, ip)).claim(ip);
    }
    if (!missing.isEmpty()) {
      toClaim.put(ns.name(), missing);
    }
    held.stream().map(ClaimState::address).filter(ip -> !ips.contains(ip)).forEach(toRelease::add);
    String normalized = String.join(",", ips.stream().map(Ip::toString).toList());
    if (!normalized.equals(ns.egressIps())) {
      annotations.put(ns.name(), normalized);
    }
    served.put(ns.name(), ips);
  }

  /** A namespace without addresses written: adopt unpublished claims, allocate the rest. */
  private static void planUnwritten(NamespaceState ns, List<ClaimState> held, List<Pool> pools,
      List<Allocator> allocators, AllocationStrategy strategy, Map<Ip, String> takenBy, Map<String, List<Ip>> toClaim,
      Map<String, String> annotations, Map<String, List<Ip>> served, List<Ip> toRelease,
      List<Ip> releaseAfterPass, List<NamespaceProblem> problems) {
    Ip[] chosen = new Ip[pools.size()];
    for (ClaimState c : held) {
      int idx = cidrIndex(pools, c.address());
      if (!c.published() && chosen[idx] == null) {
        chosen[idx] = c.address(); // claimed, never published: a restart in between; keep it
      } else {
        toRelease.add(c.address()); // the user removed the annotation: new addresses, as before
        releaseAfterPass.add(c.address());
      }
    }
    List<Ip> fresh = new ArrayList<>();
    for (int i = 0; i < pools.size(); i++) {
      if (chosen[i] != null) {
        continue;
      }
      var family = pools.get(i).families().iterator().next();
      Optional<Ip> ip = allocators.get(i).allocate(family, strategy, ns.name());
      if (ip.isEmpty()) {
        fresh.forEach(f -> allocators.get(cidrIndex(pools, f)).release(f));
        problems.add(new NamespaceProblem(ns.name(), NamespaceProblem.Reason.CIDR_EXHAUSTED,
            "CIDR " + pools.get(i).name() + " has no free address (" + allocators.get(i).capacity(family)
            + " usable, all allocated or reserved); the namespace gets its addresses when one is released"));
        return;
      }
      chosen[i] = ip.get();
      fresh.add(ip.get());
    }
    List<Ip> ips = List.of(chosen);
    fresh.forEach(ip -> takenBy.put(ip, "namespace " + ns.name())); // a written annotation cannot take it too
    if (!fresh.isEmpty()) {
      toClaim.put(ns.name(), fresh);
    }
    annotations.put(ns.name(), String.join(",", ips.stream().map(Ip::toString).toList()));
    served.put(ns.name(), ips);
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
