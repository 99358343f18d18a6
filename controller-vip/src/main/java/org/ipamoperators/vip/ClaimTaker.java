package org.ipamoperators.vip;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.ClaimIndex;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClaimResult;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.vip.plan.GroupInfo;
import org.ipamoperators.vip.plan.GroupPools;
import org.ipamoperators.vip.plan.Holding;
import org.ipamoperators.vip.plan.ServiceHoldings;
import org.ipamoperators.vip.plan.ServiceOwners;
import org.ipamoperators.vip.plan.ServiceRequest;
import org.ipamoperators.vip.plan.VipPlan;
import org.ipamoperators.vip.plan.VipProblem;

/**
 * Plans a Service's addresses and claims them until every claim of the plan succeeds, re-planning
 * around addresses others hold. No lock around a plan: fresh addresses are reserved in the index one
 * by one (an atomic put-if-absent), so threads planning at the same time pick different ones, and a
 * thread that finds its pick reserved plans again without asking the API server. The API server still
 * decides who holds an address. After {@link #ATTEMPTS} plans that each lost an address, the Service
 * waits (a blocking problem) and nothing unclaimed is ever published.
 */
final class ClaimTaker {
  private static final int ATTEMPTS = 20;
  /** Plans per reconcile, those that lost a reservation to another thread (no write) included. */
  private static final int PLANS = 200;

  private final ClusterLedger ledger;
  private final ClaimIndex index;
  private final SharedClaims shared;
  private final ServiceRelease release;
  private final VipMetrics metrics;
  /** Where first-free searches may start: past what earlier plans found taken (see {@link FirstFreeCursors}). */
  private final FirstFreeCursors firstFree;
  private final GroupPools pools = new GroupPools();
  /** Striped by sharing key: Services of one key plan one after another. */
  private final Object[] keyLocks = new Object[64];

  ClaimTaker(ClusterLedger ledger, ClaimIndex index, SharedClaims shared, ServiceRelease release, VipMetrics metrics) {
    this.ledger = ledger;
    this.index = index;
    this.shared = shared;
    this.release = release;
    this.metrics = metrics;
    this.firstFree = new FirstFreeCursors(index);
    Arrays.setAll(keyLocks, i -> new Object());
  }

  /** The plan claimed for, the ledger view it was made from, and what the Service holds now. */
  record Settled(VipPlan plan, ServiceHoldings holdings, Ingress.Held held) {}

  /** Plans and claims; problems met while claiming go to {@code extra}. */
  Settled settle(ServiceRequest request, List<GroupInfo> groupInfos, ClaimOwner owner, List<VipProblem> extra) {
    if (!request.sharing()) {
      return settleUnlocked(request, groupInfos, owner, extra);
    }
    // Services of one sharing key plan one after another, so the second joins the address the
    // first just claimed instead of claiming another one for the same key. Other keys and
    // unshared Services are not held up (striped by key).
    synchronized (keyLocks[Math.floorMod(request.sharingKey().hashCode(), keyLocks.length)]) {
      return settleUnlocked(request, groupInfos, owner, extra);
    }
  }

  /** One Service's pass: who it claims for, and the addresses it lost to others so far. */
  private record Pass(ServiceRequest request, ClaimOwner owner, ClaimOwner holderOwner, Map<Ip, String> lost,
      List<VipProblem> extra) {}

  private Settled settleUnlocked(ServiceRequest request, List<GroupInfo> groupInfos, ClaimOwner owner,
      List<VipProblem> extra) {
    Pass pass = new Pass(request, owner, request.sharing() ? SharedClaims.owner(request.sharingKey()) : owner,
        new HashMap<>(), extra);
    Settled last = null;
    int attempts = 0; // plans whose claims the API server refused
    for (int plans = 0; attempts < ATTEMPTS && plans < PLANS; plans++) {
      VipFacts.Planned planned = VipFacts.plan(index, request, owner, groupInfos, pass.lost(), firstFree, pools);
      ServiceHoldings h = planned.holdings();
      last = new Settled(planned.plan(), h, new Ingress.Held(h.heldUnder().keySet()));
      List<Holding> work = h.work(planned.plan(), request);
      if (work.isEmpty()) {
        return last;
      }
      Map<Ip, ClaimIndex.Reservation> reserved = new HashMap<>();
      try {
        if (!reserve(pass, h, work, reserved)) {
          continue; // somebody reserved our pick meanwhile: plan again, nothing was written
        }
        attempts++;
        if (claimAll(pass, last, work)) {
          return last;
        }
      } finally {
        reserved.forEach(index::unreserve); // a granted claim has replaced its reservation already
      }
    }
    extra.add(new VipProblem(VipProblem.Reason.AddressUnavailable, "every address planned for " + request.key()
        + " was taken by others first, " + attempts + " times in a row (last: " + String.join("; ",
            pass.lost().entrySet().stream().limit(3).map(e -> e.getKey() + " held by " + e.getValue()).toList())
        + "); will try again"));
    return last;
  }

  /**
   * Reserves the plan's fresh addresses in the index ({@code reserved}: to give back afterwards).
   * False when another thread holds one of them (noted in {@code lost}): the plan is made again.
   */
  private boolean reserve(Pass pass, ServiceHoldings h, List<Holding> work, Map<Ip, ClaimIndex.Reservation> reserved) {
    boolean free = true;
    for (Holding w : work) {
      if (h.heldUnder().containsKey(w.ip()) || h.joinable().containsKey(w.ip())) {
        continue; // held or joinable: the write converts or joins, nobody else can take it
      }
      ClaimIndex.Reservation r = new ClaimIndex.Reservation(pass.holderOwner(), w.pool());
      if (index.reserve(w.ip(), r)) {
        reserved.put(w.ip(), r);
        continue;
      }
      ClaimIndex.Entry e = index.get(w.ip()).orElse(null);
      if (e != null && ((pass.request().sharing() && e.owner().sameAs(pass.holderOwner()))
          || ServiceOwners.same(pass.owner(), e.owner()))) {
        continue; // this Service's (or its key's) own claim or reservation: the write below settles it
      }
      if (!isRequested(pass.request(), w.ip())) {
        pass.lost().put(w.ip(), e == null ? "another Service (being claimed)" : VipFacts.entry(e).describe());
        free = false;
      }
    }
    return free;
  }

  /**
   * Claims every address of the plan. True when the pass is settled (every claim granted, or a
   * requested address reported as held); false when another holder won one it had picked.
   */
  private boolean claimAll(Pass pass, Settled settled, List<Holding> work) {
    boolean settledNow = true;
    for (Holding w : work) {
      int before = pass.extra().size();
      String holder = take(w, pass.request(), pass.owner(), settled.holdings().heldUnder().get(w.ip()), pass.extra());
      if (holder == null) {
        if (pass.extra().size() == before) {
          settled.held().granted(w.ip());
        }
        continue;
      }
      if (isRequested(pass.request(), w.ip())) {
        pass.extra().add(new VipProblem(VipProblem.Reason.AddressUnavailable,
            "requested " + w.ip() + " is held by " + holder));
      } else {
        pass.lost().put(w.ip(), holder);
        settledNow = false;
      }
    }
    return settledNow;
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
    return req.sharing() ? join(h, req, owner, heldUnder, extra) : claimOwn(h, req, owner, heldUnder);
  }

  private String join(Holding h, ServiceRequest req, ClaimOwner owner, String heldUnder, List<VipProblem> extra) {
    if ("".equals(heldUnder)) {
      release.release(h.ip(), owner); // its own claim becomes the key's (the Service is its first member)
    } else if (heldUnder != null && !heldUnder.equals(req.sharingKey())) {
      shared.leave(h.ip(), req.key()); // another key's, used by it alone
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

  private String claimOwn(Holding h, ServiceRequest req, ClaimOwner owner, String heldUnder) {
    if (heldUnder != null && !heldUnder.isEmpty()) {
      shared.leave(h.ip(), req.key()); // it was the only member: the address becomes its own
    }
    ClaimResult r = ledger.claim(h.ip(), h.pool(), owner);
    if (r.claim() != null) {
      index.created(r.claim());
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
}
