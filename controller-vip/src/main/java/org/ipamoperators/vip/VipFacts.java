package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Service;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.ipamoperators.controller.common.ledger.ClaimIndex;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.pool.PoolOverlaps;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.VipAnnotations;
import org.ipamoperators.vip.plan.FirstFreeHints;
import org.ipamoperators.vip.plan.GroupInfo;
import org.ipamoperators.vip.plan.GroupPools;
import org.ipamoperators.vip.plan.Holding;
import org.ipamoperators.vip.plan.LedgerEntry;
import org.ipamoperators.vip.plan.NamespaceScope;
import org.ipamoperators.vip.plan.ServiceHoldings;
import org.ipamoperators.vip.plan.ServiceOwners;
import org.ipamoperators.vip.plan.ServiceRequest;
import org.ipamoperators.vip.plan.ShareMember;
import org.ipamoperators.vip.plan.Taken;
import org.ipamoperators.vip.plan.VipPlan;
import org.ipamoperators.vip.plan.VipPlanner;

/**
 * The world as controller-vip reads it, from objects however they were fetched (the reconciler's
 * informers, or a file given to {@code ipam plan}): IPGroups as the planner's groups, a Service as
 * its request, and the ledger's view of one Service from a {@link ClaimIndex}. Both run the same
 * code here, so the plan printed is the plan the controller makes.
 */
public final class VipFacts {
  private VipFacts() {}

  /** An index that also finds shared claims by the Services listed on them, as planning needs. */
  public static ClaimIndex newIndex() {
    return new ClaimIndex(VipFacts::memberKeys);
  }

  /** Index keys of the Services listed on a shared claim. */
  static List<String> memberKeys(IPClaim c) {
    return SharedClaims.isShared(c.getSpec().owner())
        ? SharedClaims.members(c).stream().map(m -> "member:" + m.service()).toList() : List.of();
  }

  /** The Service as a claim owner (its uid included: a Service re-created under its name is another). */
  public static ClaimOwner owner(Service s) {
    return new ClaimOwner(ServiceVipReconciler.CONTROLLER, "Service", s.getMetadata().getNamespace(),
        s.getMetadata().getName(), s.getMetadata().getUid());
  }

  /**
   * The IPGroups that serve: those with a spec that are not being deleted; one whose addresses overlap
   * an older group's is marked refused ({@link GroupOverlaps}).
   */
  public static List<GroupInfo> groups(Collection<IPGroup> groups) {
    PoolOverlaps.Decision overlaps = GroupOverlaps.decide(groups);
    return groups.stream().filter(g -> g.getSpec() != null && g.getMetadata().getDeletionTimestamp() == null)
        .map(g -> new GroupInfo(g.getMetadata().getName(), g.getSpec(),
            overlaps.refusal(GroupOverlaps.KIND, g.getMetadata().getName()).map(PoolOverlaps.Refusal::message)
                .orElse(null))).toList();
  }

  /**
   * What the Service asks for. Its namespace is looked up (by name, null when unknown) only when a
   * group selects namespaces by label and its {@code namespaces} (names) admit this one. The controller looks it up on the API server rather than in an
   * informer's cache: watching namespaces would need list and watch of every namespace in the
   * cluster, where the controller is granted only get, and most clusters' groups select no
   * namespace, so the lookup is rare.
   */
  public static ServiceRequest request(Service svc, List<GroupInfo> groups, Function<String, Namespace> namespace) {
    String key = VipServices.sharingKey(svc);
    return new ServiceRequest(svc.getMetadata().getNamespace(), svc.getMetadata().getName(),
        svc.getMetadata().getLabels(), namespaceLabels(svc, groups, namespace),
        VipServices.annotations(svc).get(VipAnnotations.IP_GROUP), VipServices.requested(svc),
        VipServices.families(svc), VipServices.optionalFamilies(svc), VipServices.ingress(svc), key,
        key == null ? null : VipServices.member(svc));
  }

  private static Map<String, String> namespaceLabels(Service svc, List<GroupInfo> groups,
      Function<String, Namespace> namespace) {
    if (groups.stream().noneMatch(g -> NamespaceScope.needsLabels(g.spec(), svc.getMetadata().getNamespace()))) {
      return Map.of();
    }
    Namespace ns = namespace.apply(svc.getMetadata().getNamespace());
    return ns == null || ns.getMetadata().getLabels() == null ? Map.of() : ns.getMetadata().getLabels();
  }

  /** An index entry as planning sees it. */
  public static LedgerEntry entry(ClaimIndex.Entry e) {
    if (e.reserved()) {
      return new LedgerEntry(e.ip(), e.reservation().pool(), e.reservation().owner(), List.of(), true);
    }
    IPClaim c = e.claim();
    ClaimOwner o = c.getSpec().owner();
    return new LedgerEntry(e.ip(), c.getSpec().pool(), o, SharedClaims.isShared(o) ? SharedClaims.members(c) : List.of(),
        false);
  }

  private static ClaimOwner keyOwner(ServiceRequest req) {
    return req.sharing() ? SharedClaims.owner(req.sharingKey()) : null;
  }

  /** The ledger's view of one Service: its own claims, shared claims listing it, its sharing key's claims. */
  public static ServiceHoldings holdings(ClaimIndex index, ServiceRequest req, ClaimOwner owner) {
    ClaimOwner keyOwner = keyOwner(req);
    Set<Ip> related = new HashSet<>(index.keys(ClaimIndex.ownerKey(owner)));
    related.addAll(index.keys("member:" + req.key()));
    if (keyOwner != null) {
      related.addAll(index.keys(ClaimIndex.ownerKey(keyOwner)));
    }
    List<LedgerEntry> entries = new ArrayList<>();
    for (Ip ip : related) {
      index.get(ip).map(VipFacts::entry).ifPresent(entries::add);
    }
    return ServiceHoldings.of(req, owner, keyOwner, entries);
  }

  /** Every other address of the ledger, as taken for this Service ({@code lost}: addresses it just failed to claim). */
  public static Taken taken(ClaimIndex index, ServiceRequest req, ClaimOwner owner, ServiceHoldings h,
      Map<Ip, String> lost) {
    ClaimOwner keyOwner = keyOwner(req);
    return new Taken(ip -> index.get(ip).map(VipFacts::entry),
        () -> index.claims().stream().map(c -> index.get(ClaimIndex.address(c)))
            .flatMap(Optional::stream).map(VipFacts::entry).toList(),
        h.own(), e -> ServiceOwners.same(owner, e.owner()) || e.owner().sameAs(keyOwner), lost);
  }

  /** A plan and the ledger view it was made from. */
  public record Planned(VipPlan plan, ServiceHoldings holdings) {}

  /** Plans one Service against the index, as the reconciler does before it claims. */
  public static Planned plan(ClaimIndex index, ServiceRequest req, ClaimOwner owner, List<GroupInfo> groups,
      Map<Ip, String> lost) {
    return plan(index, req, owner, groups, lost, FirstFreeHints.NONE, new GroupPools());
  }

  /**
   * The same, first-free searches starting where {@code hints} say (see {@link FirstFreeCursors}),
   * groups parsed once in {@code pools}.
   */
  static Planned plan(ClaimIndex index, ServiceRequest req, ClaimOwner owner, List<GroupInfo> groups,
      Map<Ip, String> lost, FirstFreeHints hints, GroupPools pools) {
    ServiceHoldings h = holdings(index, req, owner);
    return new Planned(VipPlanner.plan(req, groups, h, taken(index, req, owner, h, lost), hints, pools), h);
  }

  /**
   * Records in the index the claims the reconciler makes for a plan (own claims, or memberships of
   * the sharing key's claim), as if they had succeeded, so that the Services planned next see them
   * as the controller's next reconciles would. For planning without an API server ({@code ipam plan}).
   */
  public static void assumeClaimed(ClaimIndex index, ServiceRequest req, ClaimOwner owner, VipPlan plan) {
    for (Holding h : plan.toClaim()) {
      IPClaim claim;
      if (req.sharing()) {
        ClaimOwner key = SharedClaims.owner(req.sharingKey());
        List<ShareMember> members = new ArrayList<>();
        index.get(h.ip()).map(ClaimIndex.Entry::claim).filter(c -> key.sameAs(c.getSpec().owner()))
            .ifPresent(c -> members.addAll(SharedClaims.members(c)));
        members.removeIf(m -> m.service().equals(req.key()));
        members.add(req.member());
        claim = IPClaim.of(ClaimNames.of(h.ip()), new IPClaimSpec(h.ip().toString(), h.pool(), key), Map.of());
        claim.getMetadata().setAnnotations(new HashMap<>(Map.of(VipAnnotations.SHARING_MEMBERS,
            SharedClaims.json(members))));
      } else {
        claim = IPClaim.of(ClaimNames.of(h.ip()), new IPClaimSpec(h.ip().toString(), h.pool(), owner), Map.of());
      }
      index.seen(claim);
    }
  }
}
