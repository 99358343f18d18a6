package org.ipamoperators.egressip.plan;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.allocation.Allocator;
import org.ipamoperators.core.allocation.AllocatorOptions;
import org.ipamoperators.core.pool.Pool;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressIPAMSpec;

/**
 * One plan while {@link EgressPlanner} makes it: the IPAM's CIDRs with an allocator each, who holds
 * which address so far, and what the plan decided up to now. Made and dropped within one call of the
 * planner; nothing in it outlives the plan.
 */
final class PlanDraft {
  final List<CIDRAssignment> cidrs;
  final List<Pool> pools = new ArrayList<>();
  final List<Allocator> allocators = new ArrayList<>();
  final AllocationStrategy strategy;
  /** Addresses no namespace of this pass may get, with who holds them (for the message). */
  final Map<Ip, String> takenBy = new HashMap<>();
  final TreeMap<String, List<Ip>> toClaim = new TreeMap<>();
  final TreeMap<String, String> annotations = new TreeMap<>();
  final TreeMap<String, List<Ip>> served = new TreeMap<>();
  final List<Ip> toRelease = new ArrayList<>();
  /** Released by this plan and free for allocation only in the next: never handed to another namespace at once. */
  final List<Ip> releaseAfterPass = new ArrayList<>();
  final List<NamespaceProblem> problems = new ArrayList<>();

  /** A draft for a valid spec ({@link EgressPlanner#validate} found nothing). */
  PlanDraft(EgressIPAMSpec spec) {
    this.cidrs = spec.cidrs();
    this.strategy = spec.strategy() == null ? AllocationStrategy.FIRST_FREE : AllocationStrategy.valueOf(spec.strategy());
    for (CIDRAssignment c : cidrs) {
      Pool p = Pool.of(c.cidr(), List.of(c.cidr()), c.reservedOrEmpty());
      pools.add(p);
      allocators.add(Allocator.create(p, AllocatorOptions.of(strategy)));
    }
  }

  int cidrIndex(Ip ip) {
    return EgressPlanner.cidrIndex(pools, ip);
  }

  /** Taken for the rest of the plan by {@code holder}. */
  void take(Ip ip, String holder) {
    allocators.get(cidrIndex(ip)).claim(ip);
    takenBy.put(ip, holder);
  }

  /** Nodes' own addresses: nobody may get them. */
  void takeNodeAddresses(List<NodeInfo> nodes) {
    for (NodeInfo n : nodes) {
      for (Ip ip : n.primaryAddresses()) {
        if (cidrIndex(ip) >= 0) {
          take(ip, "node " + n.name() + " (its own address)");
        }
      }
    }
  }

  /**
   * Takes every claimed address in the CIDRs; returns this IPAM's claims by namespace for the
   * namespaces still wanting addresses. Claims of namespaces that left, or outside the CIDRs now, go
   * to {@link #toRelease}.
   */
  Map<String, List<ClaimState>> takeClaims(List<ClaimState> claims, Set<String> wanting) {
    Map<String, List<ClaimState>> byNamespace = new TreeMap<>();
    List<ClaimState> ordered = new ArrayList<>(claims);
    ordered.sort(Comparator.comparing(ClaimState::address));
    for (ClaimState c : ordered) {
      boolean inCidrs = cidrIndex(c.address()) >= 0;
      if (!c.ours()) {
        if (inCidrs) {
          take(c.address(), c.foreignOwner());
        }
      } else if (!inCidrs || !wanting.contains(c.namespace())) {
        toRelease.add(c.address()); // CIDR removed from the spec, or the namespace left
        if (inCidrs) {
          // Break before make: not given to another namespace in the pass that releases it. Still on an
          // interface, the release waits for its detach, and a new owner planned on it now would keep the
          // placement from ever detaching it.
          take(c.address(), "namespace " + c.namespace() + " (being released)");
        }
      } else {
        take(c.address(), "namespace " + c.namespace());
        byNamespace.computeIfAbsent(c.namespace(), k -> new ArrayList<>()).add(c);
      }
    }
    return byNamespace;
  }

  /** Records a namespace's problem; what the caller returns for it (nothing to serve). */
  <T> java.util.Optional<T> refuse(NamespaceState ns, NamespaceProblem.Reason reason, String message) {
    problems.add(new NamespaceProblem(ns.name(), reason, message));
    return java.util.Optional.empty();
  }

  /** Addresses released by this plan become free for the next one's allocations. */
  void freeReleased() {
    for (Ip ip : releaseAfterPass) {
      allocators.get(cidrIndex(ip)).release(ip);
    }
  }

  /** Per CIDR: usable, served by this plan, free. */
  List<EgressPlan.CidrUsage> usage() {
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
      usage.add(new EgressPlan.CidrUsage(cidrs.get(i).cidr(), a.capacity(family), allocated, a.freeCount(family)));
    }
    return usage;
  }
}
