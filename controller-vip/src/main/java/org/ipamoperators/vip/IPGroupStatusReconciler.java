package org.ipamoperators.vip;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.MaxReconciliationInterval;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.ipamoperators.controller.common.kube.Conditions;
import org.ipamoperators.controller.common.kube.EventRecorder;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.pool.Pool;
import org.ipamoperators.core.pool.PoolOverlaps;
import org.ipamoperators.core.pool.PoolProblem;
import org.ipamoperators.vip.api.FamilyUsage;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.IPGroupStatus;
import org.ipamoperators.vip.plan.VipPlanner;

/**
 * Reports an IPGroup's health and usage: {@code Ready} (the definition is valid, or why not; False
 * with {@code OverlapsOlderGroup} when its addresses overlap an older IPGroup's, which keeps serving
 * them, plus a Warning Event), {@code Overlapping} (which other IPGroups share its addresses) and, per family, the usable
 * addresses, those claimed in the ledger (by anyone: an address is used whoever holds it) and the
 * free ones. Counts come from the ledger, never from memory. At most one status write per group
 * every two seconds: in a burst every claim would otherwise rewrite it.
 */
@io.javaoperatorsdk.operator.processing.event.rate.RateLimited(maxReconciliations = 1, within = 2)
@ControllerConfiguration(name = "vip-ipgroups", generationAwareEventProcessing = false,
    maxReconciliationInterval = @MaxReconciliationInterval(interval = 2, timeUnit = TimeUnit.MINUTES))
public class IPGroupStatusReconciler implements Reconciler<IPGroup> {
  /** Condition: addresses held from this group that it no longer offers (after an edit). */
  static final String HELD_OUTSIDE = "HeldOutside";
  static final String CLAIMED_ELSEWHERE = "ClaimedElsewhere";
  /** Reason (Ready=False, Overlapping, Warning Event): the group overlaps an older one and serves nothing new. */
  static final String REFUSED = "OverlapsOlderGroup";
  private static final int LISTED = 20;
  private final VipMetrics metrics;
  private final Runnable leading;
  /** Claims' addresses, parsed once each: every reconcile reads every claim. */
  private final ClaimAddresses addresses = new ClaimAddresses();
  private volatile EventRecorder events;
  private InformerEventSource<IPClaim, IPGroup> claims;
  private InformerEventSource<IPGroup, IPGroup> peers;

  public IPGroupStatusReconciler() {
    this(new VipMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
  }

  IPGroupStatusReconciler(VipMetrics metrics) {
    this(metrics, () -> {});
  }

  /** {@code leading} runs at every reconcile (only the leader reconciles); it must be cheap and idempotent. */
  IPGroupStatusReconciler(VipMetrics metrics, Runnable leading) {
    this.metrics = metrics;
    this.leading = leading;
  }

  @Override
  public List<EventSource<?, IPGroup>> prepareEventSources(EventSourceContext<IPGroup> context) {
    claims = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPClaim.class, IPGroup.class)
        .withName("vip-ipgroup-claims")
        .withItemStore(new LeanItemStore<>())
        .withSecondaryToPrimaryMapper(c -> {
          String p = c.getSpec() == null ? "" : c.getSpec().pool();
          return p.startsWith("ipgroup/") ? Set.of(new ResourceID(p.substring("ipgroup/".length())))
              : all(context); // another controller's claim may use our addresses
        }).build(), context);
    // A group created, changed or deleted may start or stop overlapping the others.
    peers = new InformerEventSource<>(InformerEventSourceConfiguration.from(IPGroup.class, IPGroup.class)
        .withName("vip-ipgroup-peers")
        .withItemStore(new LeanItemStore<>())
        .withOnUpdateFilter((n, o) -> !Objects.equals(n.getSpec(), o.getSpec())
            || !Objects.equals(n.getMetadata().getDeletionTimestamp(), o.getMetadata().getDeletionTimestamp()))
        .withOnDeleteFilter((g, unknown) -> {
          metrics.forget(g.getMetadata().getName()); // a deleted group's series go with it
          return true;
        })
        .withSecondaryToPrimaryMapper(g -> all(context)).build(), context);
    return List.of(claims, peers);
  }

  private static Set<ResourceID> all(EventSourceContext<IPGroup> context) {
    return context.getPrimaryCache().list().map(ResourceID::fromResource).collect(Collectors.toSet());
  }

  @Override
  public UpdateControl<IPGroup> reconcile(IPGroup group, Context<IPGroup> context) {
    leading.run();
    String name = group.getMetadata().getName();
    List<PoolProblem> problems = group.getSpec() == null ? List.of(new PoolProblem("", "spec is missing: give spec.segment or spec.cidrs"))
        : Pool.validate(name, group.getSpec().ranges(), group.getSpec().excluded());
    IPGroupStatus status = problems.isEmpty() ? valid(group, context) : invalid(group, problems, context);
    if (group.getStatus() != null && sameIgnoringTimes(group.getStatus(), status)) {
      return UpdateControl.noUpdate();
    }
    IPGroup patch = new IPGroup();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    patch.setMetadata(meta);
    patch.setStatus(status);
    return UpdateControl.patchStatus(patch);
  }

  private static List<Condition> conditions(IPGroup group) {
    return group.getStatus() == null ? null : group.getStatus().conditions();
  }

  private IPGroupStatus invalid(IPGroup group, List<PoolProblem> problems, Context<IPGroup> context) {
    Long generation = group.getMetadata().getGeneration();
    String message = VipPlanner.summary(problems);
    events(context).warning(group, "InvalidSpec", message);
    var conditions = Conditions.set(conditions(group), "Ready", false, "InvalidSpec", message, generation);
    conditions = Conditions.set(conditions, "Overlapping", false, "InvalidSpec", "", generation);
    metrics.pool(group.getMetadata().getName(), List.of());
    return new IPGroupStatus(conditions, generation, null, null, null);
  }

  private IPGroupStatus valid(IPGroup group, Context<IPGroup> context) {
    String name = group.getMetadata().getName();
    Long generation = group.getMetadata().getGeneration();
    Pool pool = Pool.of(name, group.getSpec().ranges(), group.getSpec().excluded());
    Overlap overlap = overlap(group);
    if (overlap.refusal() != null) {
      events(context).warning(group, REFUSED, overlap.refusal());
    }
    List<String> outside = outside(name, pool);
    List<String> elsewhere = elsewhere(pool);
    List<FamilyUsage> families = new ArrayList<>();
    long used = 0;
    List<String> free = new ArrayList<>();
    List<Ip> claimed = claims.list(c -> c.getSpec() != null).map(addresses::of).filter(Objects::nonNull).toList();
    for (IpFamily f : pool.families()) {
      BigInteger total = pool.capacity(f);
      long u = claimed.stream().filter(ip -> ip.family() == f && pool.isUsable(ip)).count();
      BigInteger fr = total.subtract(BigInteger.valueOf(u)).max(BigInteger.ZERO);
      families.add(new FamilyUsage(f.kubernetesName(), total.toString(), Long.toString(u), fr.toString()));
      used += u;
      free.add(pool.families().size() > 1 ? f.kubernetesName() + ": " + fr : fr.toString());
    }
    var conditions = overlap.refusal() == null ? Conditions.set(conditions(group), "Ready", true, "Valid", "", generation)
        : Conditions.set(conditions(group), "Ready", false, REFUSED, overlap.refusal(), generation);
    conditions = Conditions.set(conditions, "Overlapping", overlap.message() != null,
        overlap.message() == null ? "NoOverlap" : overlap.refusal() != null ? REFUSED : "OverlapsOtherGroups",
        overlap.message() == null ? "" : overlap.message(), generation);
    conditions = Conditions.set(conditions, CLAIMED_ELSEWHERE, !elsewhere.isEmpty(),
        elsewhere.isEmpty() ? "NoForeignClaims" : "HeldByAnotherController",
        elsewhere.isEmpty() ? "" : elsewhere.size() + " address(es) of this group are held in the ledger by another"
            + " controller and are not offered: " + String.join("; ", elsewhere.subList(0, Math.min(LISTED,
            elsewhere.size()))) + (elsewhere.size() > LISTED ? "; ..." : ""), generation);
    conditions = Conditions.set(conditions, HELD_OUTSIDE, !outside.isEmpty(),
        outside.isEmpty() ? "AllOffered" : "AddressesNoLongerOffered",
        outside.isEmpty() ? "" : outside.size() + " held address(es) no longer offered by this group, kept by their"
            + " holders until released: " + String.join("; ", outside.subList(0, Math.min(LISTED, outside.size())))
            + (outside.size() > LISTED ? "; ..." : ""), generation);
    metrics.pool(name, families);
    return new IPGroupStatus(conditions, generation, families, used, String.join(", ", free));
  }

  /** Addresses held from this group that an edit took out of it: reported, never taken away. */
  private List<String> outside(String name, Pool pool) {
    List<String> outside = new ArrayList<>();
    claims.list(c -> c.getSpec() != null && ("ipgroup/" + name).equals(c.getSpec().pool())).forEach(c -> {
      Ip ip = addresses.of(c);
      if (ip != null) {
        pool.whyUnusable(ip).ifPresent(why -> outside.add(why + " but is held by " + c.getSpec().owner().describe()));
      }
    });
    outside.sort(null);
    return outside;
  }

  /**
   * Addresses of this group that another controller's ledger entry holds (an egress IP, a VRRP
   * VIP...): never handed out here, and said so, since the pool is smaller than its ranges.
   */
  private List<String> elsewhere(Pool pool) {
    List<String> elsewhere = new ArrayList<>();
    claims.list(c -> c.getSpec() != null && c.getSpec().pool() != null && !c.getSpec().pool().startsWith("ipgroup/"))
        .forEach(c -> {
          Ip ip = addresses.of(c);
          if (ip != null && pool.isUsable(ip)) {
            elsewhere.add(ip + " (" + c.getSpec().pool() + ", " + c.getSpec().owner().describe() + ")");
          }
        });
    elsewhere.sort(null);
    return elsewhere;
  }

  /** This group's overlaps: why it is refused (null: it serves), and the Overlapping message (null: none). */
  private record Overlap(String refusal, String message) {}

  /**
   * Decided over every IPGroup as the informer shows them, as the planner decides ({@link GroupOverlaps}):
   * the oldest of overlapping groups serves, the others are refused and hand out no new address.
   */
  private Overlap overlap(IPGroup group) {
    String name = group.getMetadata().getName();
    PoolOverlaps.Decision d = GroupOverlaps.decide(peers.list(g -> true).toList());
    var refusal = d.refusal(GroupOverlaps.KIND, name);
    if (refusal.isPresent()) {
      String message = refusal.get().message() + "; this IPGroup hands out no new address while it overlaps an"
          + " older IPGroup (addresses it gave stay with their Services)";
      List<String> older = refusal.get().olderOwners().stream().map(PoolOverlaps.Owner::name).toList();
      return new Overlap(message, "shares addresses with IPGroup(s) " + String.join(", ", older)
          + ", created earlier: refused");
    }
    // Every refused group sharing an address with this one (refused because of it or of another group).
    List<IpRange> mine = d.accepted().stream().filter(o -> o.name().equals(name)).findFirst()
        .map(PoolOverlaps.Owner::ranges).orElse(List.of());
    List<String> refused = d.refused().stream()
        .filter(r -> r.owner().ranges().stream().anyMatch(x -> mine.stream().anyMatch(x::overlaps)))
        .map(r -> r.owner().name()).sorted().toList();
    return new Overlap(null, refused.isEmpty() ? null : "shares addresses with IPGroup(s) " + String.join(", ", refused)
        + ", refused for overlapping an older group: this group serves its addresses alone");
  }

  /** Events on the group at fault (repeats within ten minutes are dropped by the recorder). */
  private EventRecorder events(Context<IPGroup> context) {
    EventRecorder e = events;
    if (e == null) {
      e = new EventRecorder(context.getClient(), "vip-controller");
      events = e;
    }
    return e;
  }

  private static boolean sameIgnoringTimes(IPGroupStatus a, IPGroupStatus b) {
    return Objects.equals(a.families(), b.families()) && Objects.equals(a.used(), b.used())
        && Objects.equals(a.free(), b.free()) && Objects.equals(a.observedGeneration(), b.observedGeneration())
        && Objects.equals(conditionKeys(a), conditionKeys(b));
  }

  private static List<String> conditionKeys(IPGroupStatus s) {
    return s.conditions() == null ? List.of() : s.conditions().stream()
        .map(c -> c.getType() + "=" + c.getStatus() + "/" + c.getReason() + "/" + c.getMessage()).toList();
  }
}
