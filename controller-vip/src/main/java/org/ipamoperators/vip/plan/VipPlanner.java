package org.ipamoperators.vip.plan;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.ipamoperators.controller.common.kube.LabelSelectors;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.allocation.AllocationStrategy;
import org.ipamoperators.core.allocation.Allocator;
import org.ipamoperators.core.allocation.AllocatorOptions;
import org.ipamoperators.core.pool.Pool;
import org.ipamoperators.core.pool.PoolProblem;

/**
 * Decides the addresses of one LoadBalancer Service, purely: from the request, the IPGroups, the
 * Service's own claims and every address claimed by anyone. An address the Service holds is kept for
 * as long as the Service exists. A missing family gets the requested address, or one from the
 * IPGroup named by annotation, or from the highest-priority IPGroup (ties by name) whose autoAssign
 * and selectors admit the Service and that has a free address of the family. Every refusal says why,
 * pool by pool. A group refused for overlapping an older one ({@link GroupInfo#refused()}) hands out
 * nothing new, as an invalid one; addresses held from it are kept.
 */
public final class VipPlanner {
  private VipPlanner() {}

  public static String pool(String group) {
    return "ipgroup/" + group;
  }

  /** Groups in the order they are tried: highest priority first, then by name. */
  static final Comparator<GroupInfo> ORDER = Comparator
      .comparingInt((GroupInfo g) -> -g.spec().priorityOrDefault()).thenComparing(GroupInfo::name);

  public static VipPlan plan(ServiceRequest req, List<GroupInfo> groups, List<Holding> held, Map<Ip, String> taken) {
    return plan(req, groups, held, taken, Map.of());
  }

  /** Plans from the ledger's view of the Service ({@link ServiceHoldings}) and of everyone else ({@link Taken}). */
  public static VipPlan plan(ServiceRequest req, List<GroupInfo> groups, ServiceHoldings holdings, Map<Ip, String> taken) {
    return plan(req, groups, holdings.held(), taken, holdings.joinable());
  }

  /**
   * The same, first-free searches starting where {@code hints} say everything below is taken, and
   * groups parsed once in {@code pools}.
   */
  public static VipPlan plan(ServiceRequest req, List<GroupInfo> groups, ServiceHoldings holdings, Map<Ip, String> taken,
      FirstFreeHints hints, GroupPools pools) {
    return plan(req, groups, holdings.held(), taken, holdings.joinable(), hints, pools);
  }

  /**
   * @param held the Service's own claims (its own, or memberships of its sharing key's addresses)
   * @param taken every address claimed by others in the cluster, with a description of its holder;
   *     only looked up ({@code containsKey}, {@code get}), never iterated, so it may be a view
   * @param joinable the addresses held under the Service's sharing key that it does not use yet
   */
  public static VipPlan plan(ServiceRequest req, List<GroupInfo> groups, List<Holding> held, Map<Ip, String> taken,
      Map<Ip, SharedAddress> joinable) {
    return plan(req, groups, held, taken, joinable, FirstFreeHints.NONE, new GroupPools());
  }

  private static VipPlan plan(ServiceRequest req, List<GroupInfo> groups, List<Holding> held, Map<Ip, String> taken,
      Map<Ip, SharedAddress> joinable, FirstFreeHints hints, GroupPools groupPools) {
    Context ctx = context(req, groups, taken, joinable, hints, groupPools);
    Draft d = new Draft(new EnumMap<>(IpFamily.class), new EnumMap<>(IpFamily.class), new ArrayList<>(),
        new ArrayList<>());
    Map<IpFamily, Ip> requested = requested(req, d.problems());
    Set<IpFamily> wanted = new LinkedHashSet<>(req.families());
    Set<IpFamily> all = new LinkedHashSet<>(wanted);
    all.addAll(req.optionalFamilies());
    for (Ip r : requested.values()) {
      if (!all.contains(r.family())) {
        d.problems().add(new VipProblem(VipProblem.Reason.InvalidRequest, "requested " + r + " is "
            + r.family().kubernetesName() + " but the Service's ipFamilies are " + familyNames(wanted)));
      }
    }
    keepHeld(req, held, all, d);
    if (d.problems().stream().anyMatch(p -> p.reason() == VipProblem.Reason.InvalidRequest)) {
      // A request that cannot be used as written gets nothing new: the plan is incomplete, so an
      // address claimed now would never be published and would only be taken from the pool.
      // What the Service already holds stays.
      return d.keepOnly(all);
    }
    for (IpFamily family : all) {
      choose(ctx, d, family, !wanted.contains(family), requested.get(family));
    }
    if (d.problems().stream().anyMatch(VipProblem::blocking)) {
      // A Service left without an address gets nothing new either (as with an unusable request above):
      // claiming the rest would hold addresses nobody shows for as long as it waits. It keeps what it holds.
      return d.keepOnly(all);
    }
    List<Ip> ingress = new ArrayList<>();
    for (IpFamily f : all) {
      if (d.claim().containsKey(f)) {
        ingress.add(d.claim().get(f).ip());
      } else if (d.keep().containsKey(f)) {
        ingress.add(d.keep().get(f).ip());
      }
    }
    Set<Ip> used = new java.util.HashSet<>(ingress);
    d.release().removeIf(h -> used.contains(h.ip()));
    return new VipPlan(List.copyOf(d.keep().values()), List.copyOf(d.claim().values()), d.release(), d.problems(),
        ingress);
  }

  /** A plan being made: what is kept, claimed and released by family, and the problems so far. */
  private record Draft(Map<IpFamily, Holding> keep, Map<IpFamily, Holding> claim, List<Holding> release,
      List<VipProblem> problems) {

    /** Nothing new: the Service keeps what it holds, in its families' order. */
    VipPlan keepOnly(Set<IpFamily> all) {
      List<Ip> ingress = all.stream().filter(keep::containsKey).map(f -> keep.get(f).ip()).toList();
      return new VipPlan(List.copyOf(keep.values()), List.of(), release, problems, ingress);
    }
  }

  /** The groups in order, their pools, and why those that hand out nothing new do not. */
  private static Context context(ServiceRequest req, List<GroupInfo> groups, Map<Ip, String> taken,
      Map<Ip, SharedAddress> joinable, FirstFreeHints hints, GroupPools groupPools) {
    List<GroupInfo> ordered = groups.stream().sorted(ORDER).toList();
    Map<String, Pool> pools = new java.util.HashMap<>();
    Map<String, String> invalid = new java.util.HashMap<>();
    for (GroupInfo g : ordered) {
      GroupPools.Parsed parsed = groupPools.parse(g);
      if (parsed.pool() != null) {
        pools.put(g.name(), parsed.pool());
      } else {
        invalid.put(g.name(), "invalid (" + parsed.problems() + ")");
      }
      if (g.refused() != null && parsed.pool() != null) {
        // Overlaps an older group: no new address from it; what it gave stays (see outsideOfItsGroup).
        invalid.put(g.name(), "refused, its addresses overlap an older IPGroup's (" + g.refused() + ")");
      }
    }
    return new Context(req, ordered, pools, invalid, taken, joinable, hints);
  }

  /** Requested addresses, one per family; unusable entries become problems. */
  private static Map<IpFamily, Ip> requested(ServiceRequest req, List<VipProblem> problems) {
    Map<IpFamily, Ip> requested = new EnumMap<>(IpFamily.class);
    // A huge annotation (thousands of entries) makes one problem per entry at most PROBLEMS_SHOWN
    // times, then a count: each problem is an Event, and all of them one condition message.
    int requestProblems = 0;
    for (String r : req.requested()) {
      Ip ip;
      String problem;
      try {
        ip = Ip.parse(r.trim()); // strict: inet_aton, zero-padded and short forms are refused
        problem = requested.containsKey(ip.family()) ? "two " + ip.family().kubernetesName()
            + " addresses requested (" + requested.get(ip.family()) + ", " + ip + "): write one address per family;"
            + " no new address is assigned until then" : null;
      } catch (IllegalArgumentException e) {
        ip = null;
        problem = "requested address " + quoted(r) + " is not an IP address"
            + (r.length() <= QUOTED ? ": " + e.getMessage() : "");
      }
      if (problem != null) {
        if (++requestProblems <= PROBLEMS_SHOWN) {
          problems.add(new VipProblem(VipProblem.Reason.InvalidRequest, problem));
        }
        continue;
      }
      requested.put(ip.family(), ip);
    }
    if (requestProblems > PROBLEMS_SHOWN) {
      problems.add(new VipProblem(VipProblem.Reason.InvalidRequest, (requestProblems - PROBLEMS_SHOWN)
          + " more unusable entries among the " + req.requested().size() + " requested addresses; write one address"
          + " per family"));
    }
    return requested;
  }

  /**
   * Keeps what is held: one claim per family the Service wants (the one its status shows first),
   * releases the rest.
   */
  private static void keepHeld(ServiceRequest req, List<Holding> held, Set<IpFamily> all, Draft d) {
    Set<Ip> shown = new java.util.HashSet<>();
    for (String c : req.current()) {
      try {
        shown.add(Ip.parse(c));
      } catch (IllegalArgumentException e) {
        // not an address
      }
    }
    for (Holding h : held.stream().sorted(Comparator.comparing((Holding x) -> !shown.contains(x.ip()))
        .thenComparing(Holding::ip)).toList()) {
      if (all.contains(h.ip().family()) && !d.keep().containsKey(h.ip().family())) {
        d.keep().put(h.ip().family(), h);
      } else {
        d.release().add(h);
      }
    }
  }

  /** One family's address: the one held (moved when another is requested), requested, shared or new. */
  private static void choose(Context ctx, Draft d, IpFamily family, boolean optional, Ip want) {
    Holding h = d.keep().get(family);
    if (h != null) {
      if (want != null && !want.equals(h.ip())) {
        // The user asks for another address: move once the new one is ours (claim it, publish
        // it, then release the old one); if it cannot be had, keep the old one and say why.
        Choice c = ctx.offer(want);
        if (c.holding() != null) {
          d.keep().remove(family);
          d.claim().put(family, c.holding());
          d.release().add(h);
          return;
        }
        d.problems().add(new VipProblem(VipProblem.Reason.AddressKept,
            c.problem().message() + "; the Service keeps " + h.ip()));
      }
      outsideOfItsGroup(h, ctx).ifPresent(d.problems()::add);
      return;
    }
    if (want == null) {
      // The status shows an address whose claim went missing (deleted by hand, or an ingress
      // written before this controller): take the same one back when nobody else holds it.
      Optional<Holding> again = current(ctx.req(), family).map(ctx::offer).map(Choice::holding);
      if (again.isPresent()) {
        d.claim().put(family, again.get());
        return;
      }
    }
    Choice c = want != null ? ctx.offer(want) : ctx.req().sharing() ? ctx.joinOne(family) : null;
    if (c != null) {
      if (c.holding() != null) {
        d.claim().put(family, c.holding());
      } else {
        d.problems().add(c.problem());
      }
      return;
    }
    allocate(ctx, family, optional, d.problems()).ifPresent(x -> d.claim().put(family, x));
  }

  /** An address that could be had, or why not. */
  private record Choice(Holding holding, VipProblem problem) {}

  /** Everything a decision about one address needs. */
  private record Context(ServiceRequest req, List<GroupInfo> ordered, Map<String, Pool> pools,
      Map<String, String> invalid, Map<Ip, String> taken, Map<Ip, SharedAddress> joinable, FirstFreeHints hints) {

    /** A specific address: free in a pool that admits the Service, or its sharing key's and shareable. */
    Choice offer(Ip want) {
      SharedAddress shared = joinable.get(want);
      if (shared != null) {
        Optional<String> clash = Sharing.conflict(req.member(), shared.members());
        if (clash.isPresent()) {
          return new Choice(null, new VipProblem(VipProblem.Reason.PortClash, want + " is shared under key "
              + shared.key() + " and cannot be shared with this Service: " + clash.get()));
        }
      }
      Optional<String> g = requestedAddress(req, ordered, pools, invalid, want, taken);
      if (g.isPresent()) {
        return new Choice(new Holding(want, shared != null ? shared.pool() : pool(g.get())), null);
      }
      return new Choice(null, whyNot(req, ordered, pools, invalid, want, taken));
    }

    /**
     * The first address of the Service's sharing key in this family that a pool admitting the
     * Service contains and that it can share; null when the key has no such address yet.
     */
    Choice joinOne(IpFamily family) {
      List<String> clashes = new ArrayList<>();
      for (Map.Entry<Ip, SharedAddress> e : joinable.entrySet().stream()
          .filter(e -> e.getKey().family() == family).sorted(Map.Entry.comparingByKey()).toList()) {
        if (requestedAddress(req, ordered, pools, invalid, e.getKey(), taken).isEmpty()) {
          continue; // e.g. from a pool this Service may not use
        }
        Choice c = offer(e.getKey());
        if (c.holding() != null) {
          return c;
        }
        clashes.add(c.problem().message());
      }
      return clashes.isEmpty() ? null : new Choice(null, new VipProblem(VipProblem.Reason.PortClash,
          String.join("; ", clashes)));
    }
  }

  /** A held address its IPGroup no longer offers: reported, never moved by us. */
  private static Optional<VipProblem> outsideOfItsGroup(Holding h, Context ctx) {
    if (!h.pool().startsWith("ipgroup/")) {
      return Optional.empty();
    }
    String group = h.pool().substring("ipgroup/".length());
    if (ctx.invalid().containsKey(group)) {
      return Optional.empty(); // invalid or refused: the group reports its own problem; nothing is decided on it
    }
    Pool p = ctx.pools().get(group);
    if (p == null) {
      return Optional.of(new VipProblem(VipProblem.Reason.AddressOutsidePool, "holds " + h.ip()
          + " from IPGroup " + group + ", which no longer exists; the address is kept"));
    }
    Optional<VipProblem> unusable = p.whyUnusable(h.ip()).map(why -> new VipProblem(
        VipProblem.Reason.AddressOutsidePool, "holds " + h.ip() + " but IPGroup " + group + " no longer offers it ("
        + why + "); the address is kept until the Service asks for another one or is deleted"));
    return unusable.isPresent() ? unusable : notItsNamespace(h, group, ctx);
  }

  /** A held address whose group's namespaces or namespaceSelector left the Service's namespace out since. */
  private static Optional<VipProblem> notItsNamespace(Holding h, String group, Context ctx) {
    return ctx.ordered().stream().filter(g -> g.name().equals(group)).findFirst()
        .map(g -> NamespaceScope.rejection(g.spec(), ctx.req().namespace(), ctx.req().namespaceLabels()))
        .map(why -> new VipProblem(VipProblem.Reason.AddressOutsidePool, "holds " + h.ip() + " but IPGroup "
            + group + " no longer serves this Service (" + why + "); the address is kept until the Service asks"
            + " for another one or is deleted"));
  }

  /** Why a group may not serve this Service at all (null when it may). */
  private static String rejection(ServiceRequest req, GroupInfo g, Map<String, String> invalid, boolean explicit) {
    if (invalid.containsKey(g.name())) {
      return invalid.get(g.name()); // invalid, or refused for overlapping an older group
    }
    if (!explicit && !g.spec().autoAssignOrDefault()) {
      return "autoAssign is false (name it in the " + org.ipamoperators.vip.api.VipAnnotations.IP_GROUP + " annotation)";
    }
    if (!LabelSelectors.matches(g.spec().serviceSelector(), req.labels())) {
      return "its serviceSelector does not match the Service's labels";
    }
    return NamespaceScope.rejection(g.spec(), req.namespace(), req.namespaceLabels());
  }

  private static List<GroupInfo> candidates(ServiceRequest req, List<GroupInfo> ordered) {
    if (req.ipGroup() == null) {
      return ordered;
    }
    return ordered.stream().filter(g -> g.name().equals(req.ipGroup())).toList();
  }

  private static Optional<String> requestedAddress(ServiceRequest req, List<GroupInfo> ordered, Map<String, Pool> pools,
      Map<String, String> invalid, Ip want, Map<Ip, String> taken) {
    if (taken.containsKey(want)) {
      return Optional.empty();
    }
    for (GroupInfo g : candidates(req, ordered)) {
      Pool p = pools.get(g.name());
      if (p != null && p.isUsable(want) && rejection(req, g, invalid, true) == null) {
        return Optional.of(g.name());
      }
    }
    return Optional.empty();
  }

  private static VipProblem whyNot(ServiceRequest req, List<GroupInfo> ordered, Map<String, Pool> pools,
      Map<String, String> invalid, Ip want, Map<Ip, String> taken) {
    if (taken.containsKey(want)) {
      return new VipProblem(VipProblem.Reason.AddressUnavailable, "requested " + want + " is held by " + taken.get(want));
    }
    List<GroupInfo> c = candidates(req, ordered);
    if (req.ipGroup() != null && c.isEmpty()) {
      return new VipProblem(VipProblem.Reason.NoPool, "IPGroup " + req.ipGroup() + " does not exist");
    }
    List<String> reasons = new ArrayList<>();
    for (GroupInfo g : c) {
      Pool p = pools.get(g.name());
      String r = rejection(req, g, invalid, true);
      if (r != null && (p == null || p.contains(want))) {
        reasons.add(g.name() + ": " + r);
      } else if (p != null && p.contains(want)) {
        reasons.add(g.name() + ": " + p.whyUnusable(want).orElse("unusable"));
      }
    }
    if (reasons.isEmpty()) {
      return new VipProblem(VipProblem.Reason.AddressUnavailable, "no IPGroup contains " + want
          + (req.ipGroup() == null ? "" : " (IPGroup " + req.ipGroup() + " does not)"));
    }
    return new VipProblem(VipProblem.Reason.AddressUnavailable, "requested " + want + " cannot be used: "
        + String.join("; ", reasons));
  }

  private static Optional<Holding> allocate(Context ctx, IpFamily family, boolean optional, List<VipProblem> problems) {
    ServiceRequest req = ctx.req();
    List<GroupInfo> ordered = ctx.ordered();
    Map<String, Pool> pools = ctx.pools();
    Map<String, String> invalid = ctx.invalid();
    // A sharing key's addresses this Service cannot share are not free for it either.
    Map<Ip, String> taken = ctx.taken();
    Map<Ip, SharedAddress> joinable = ctx.joinable();
    List<GroupInfo> c = candidates(req, ordered);
    if (req.ipGroup() != null && c.isEmpty()) {
      problems.add(new VipProblem(VipProblem.Reason.NoPool, "IPGroup " + req.ipGroup() + " does not exist"));
      return Optional.empty();
    }
    List<String> reasons = new ArrayList<>();
    boolean exhausted = false;
    boolean anyOfFamily = false;
    for (GroupInfo g : c) {
      String r = rejection(req, g, invalid, req.ipGroup() != null);
      if (r != null) {
        reasons.add(g.name() + ": " + r);
        continue;
      }
      Pool p = pools.get(g.name());
      if (!p.families().contains(family)) {
        reasons.add(g.name() + ": has no " + family.kubernetesName() + " range");
        continue;
      }
      anyOfFamily = true;
      // Probe: the allocator of an empty pool offers addresses in the group's order (first free,
      // random, sticky), each offered once; the first one nobody holds is the answer. A plan looks
      // up the addresses it passes over, not every address in the ledger.
      Optional<Ip> ip;
      if (strategy(g) == AllocationStrategy.FIRST_FREE) {
        FirstFreeHints.Search search = ctx.hints().search(g, family);
        ip = firstFree(p, family, search.from(), taken, joinable);
        ip.ifPresent(search::found);
      } else {
        Allocator a = Allocator.create(p, AllocatorOptions.of(strategy(g)));
        ip = a.allocate(family, req.key());
        while (ip.isPresent() && (taken.containsKey(ip.get()) || joinable.containsKey(ip.get()))) {
          ip = a.allocate(family, req.key());
        }
      }
      if (ip.isPresent()) {
        return Optional.of(new Holding(ip.get(), pool(g.name())));
      }
      exhausted = true;
      reasons.add(g.name() + ": no free " + family.kubernetesName() + " address (" + p.capacity(family) + " in use)");
    }
    if (optional && !anyOfFamily) {
      return Optional.empty(); // PreferDualStack and no pool of that family: single-stack it is
    }
    String detail = reasons.isEmpty() ? "there are no IPGroups" : String.join("; ", reasons);
    problems.add(new VipProblem(exhausted ? VipProblem.Reason.PoolExhausted : VipProblem.Reason.NoPool,
        "no " + family.kubernetesName() + " address for " + req.key() + ": " + detail));
    return Optional.empty();
  }

  /**
   * The lowest usable address of the family, from {@code from} on (null: from the first), that is
   * neither taken nor joinable: the allocator's first-free order (ascending over the pool's usable
   * ranges), walked directly so that a search can start in the middle.
   */
  static Optional<Ip> firstFree(Pool p, IpFamily family, Ip from, Map<Ip, String> taken,
      Map<Ip, SharedAddress> joinable) {
    for (IpRange r : p.usable(family)) {
      if (from != null && r.last().compareTo(from) < 0) {
        continue;
      }
      Ip ip = from != null && r.first().compareTo(from) < 0 ? from : r.first();
      while (ip != null && ip.compareTo(r.last()) <= 0) {
        if (!taken.containsKey(ip) && !joinable.containsKey(ip)) {
          return Optional.of(ip);
        }
        ip = ip.next();
      }
    }
    return Optional.empty();
  }

  private static Optional<Ip> current(ServiceRequest req, IpFamily family) {
    for (String c : req.current()) {
      try {
        Ip ip = Ip.parse(c);
        if (ip.family() == family) {
          return Optional.of(ip);
        }
      } catch (IllegalArgumentException e) {
        // a host name or garbage in the status: not ours
      }
    }
    return Optional.empty();
  }

  private static AllocationStrategy strategy(GroupInfo g) {
    return g.spec().strategy() == null ? AllocationStrategy.FIRST_FREE : AllocationStrategy.valueOf(g.spec().strategy());
  }

  private static String familyNames(Set<IpFamily> families) {
    return families.stream().map(IpFamily::kubernetesName).toList().toString();
  }

  /** At most this many problems of one kind are spelled out in a message; the rest are counted. */
  public static final int PROBLEMS_SHOWN = 5;
  /** Longer user values are cut in messages. */
  static final int QUOTED = 64;

  /** A user's value in a message: quoted, cut to its first 64 characters with its length when longer. */
  public static String quoted(String value) {
    if (value == null) {
      return "''";
    }
    return value.length() <= QUOTED ? "'" + value + "'"
        : "'" + value.substring(0, QUOTED) + "...' (" + value.length() + " characters)";
  }

  /** A group's problems as one message: the first few, then how many more. */
  public static String summary(List<PoolProblem> problems) {
    String shown = String.join("; ", problems.stream().limit(PROBLEMS_SHOWN).map(PoolProblem::message).toList());
    return problems.size() <= PROBLEMS_SHOWN ? shown
        : shown + "; and " + (problems.size() - PROBLEMS_SHOWN) + " more problem(s)";
  }
}
