package org.ipamoperators.egressip.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.failover.HealthObservation;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.junit.jupiter.api.Test;

/**
 * One holder at every step, over random histories of one EgressIPAM on OpenShift SDN whose every write
 * may be refused: namespaces opt in and out, write, change and remove addresses, are deleted, a node
 * fails and comes back, and each pass applies the planner's decision in {@link EgressWrites}' order
 * (unpublish, claim, publish, network, release) with each single write refused at random. After every
 * single write: no address is shown by two namespaces (published annotation or NetNamespace), none is
 * on two HostSubnets, and every address a namespace shows is claimed by that namespace. QuickTheories
 * draws the seed; a failure names the seed and step.
 */
class OneHolderPropertiesTest {
  private static final String IPAM = "t";
  private static final String POOL = EgressPolicy.pool(IPAM);
  private static final Instant NOW = Instant.parse("2026-01-01T00:10:00Z");
  private static final IpRange A = IpRange.parse("192.0.2.0/29");

  @Test
  void noSequenceOfRefusedWritesShowsAnAddressTwiceOrWhileFree() {
    AtomicLong refused = new AtomicLong();
    AtomicLong kept = new AtomicLong();
    AtomicLong handedOver = new AtomicLong();
    qt().withExamples(200).forAll(longs().all()).checkAssert(seed -> {
      World w = new World(seed);
      w.run();
      refused.addAndGet(w.refused);
      kept.addAndGet(w.kept);
      handedOver.addAndGet(w.handedOver);
    });
    // Not vacuous: writes were refused, releases held back by them, and addresses went to a second namespace.
    assertThat(refused.get()).isGreaterThan(1000);
    assertThat(kept.get()).isGreaterThan(100);
    assertThat(handedOver.get()).isGreaterThan(100);
  }

  @Test
  void theReleaseRuleKeepsWhatIsShownAndNamesWhere() {
    Ip shown = Ip.parse("192.0.2.1");
    Ip clear = Ip.parse("192.0.2.2");
    EgressWrites.Release r = EgressWrites.release(List.of(shown, clear), ip -> ip.equals(shown)
        ? Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.NET_NAMESPACE, "a")) : Optional.empty());
    assertThat(r.now()).containsExactly(clear);
    assertThat(r.kept()).containsOnlyKeys(shown);
    assertThat(r.describeKept()).isEqualTo("kept until cleared: 192.0.2.1 (still on NetNamespace a)");
    assertThat(EgressWrites.toClear(Map.of("b", List.of(shown)), Map.of("a", Set.of(shown), "b", Set.of(shown),
        "c", Set.of()))).containsExactly("a");
  }

  /** One random history. */
  static final class World {
    private final long seed;
    private final SplittableRandom random;
    /** Opted-in namespaces with their annotations (the planner's input). */
    private final Map<String, NamespaceState> optedIn = new TreeMap<>();
    /** Every namespace's egressips and egressips-published annotations, opted in or not. */
    private final Map<String, String[]> annotations = new TreeMap<>();
    /** The namespaces whose egressips value is one we wrote (a user's own value is a request, not a publication). */
    private final Set<String> ours = new TreeSet<>();
    private final Map<String, Set<Ip>> netNamespaces = new TreeMap<>();
    private final Map<String, Set<Ip>> hostSubnets = new TreeMap<>(Map.of("a1", new TreeSet<>(), "a2", new TreeSet<>()));
    private final Map<Ip, ClaimFact> ledger = new HashMap<>();
    private final Map<Ip, String> lastHolder = new HashMap<>();
    private boolean a2Ready = true;
    private int step;
    private int uids;
    long refused;
    long kept;
    long handedOver;

    World(long seed) {
      this.seed = seed;
      this.random = new SplittableRandom(seed);
    }

    void run() {
      for (step = 0; step < 60; step++) {
        if (random.nextInt(3) == 0) {
          change();
        }
        pass();
      }
    }

    private boolean refuse() {
      boolean r = random.nextInt(10) < 3;
      refused += r ? 1 : 0;
      return r;
    }

    private void pass() {
      EgressDecision d = EgressPolicy.decide(inputs(), Map.of(), NOW.plusSeconds(step), EgressPlanner.Memory.NONE,
          Orphans.Watch.NONE);
      EgressPlan plan = d.plan();
      Map<String, List<Ip>> served = new TreeMap<>(plan.served());
      Set<String> cleared = new TreeSet<>();
      for (Ip ip : plan.toRelease()) {
        String ns = ledger.get(ip).ownerName();
        if (!served.containsKey(ns) && annotations.containsKey(ns)) {
          cleared.add(ns);
        }
      }
      for (String ns : cleared) { // unpublish: leavers lose the annotation
        if (!optedIn.containsKey(ns) && annotations.get(ns)[0] != null && !refuse()) {
          annotations.put(ns, new String[] {null, null});
          ours.remove(ns);
          check("unpublish " + ns);
        }
      }
      for (String ns : plan.served().keySet()) { // claim, then publish
        List<Ip> toClaim = plan.toClaim().getOrDefault(ns, List.of());
        String value = plan.annotations().get(ns);
        if (toClaim.stream().anyMatch(ledger::containsKey)) {
          served.remove(ns);
          continue;
        }
        toClaim.forEach(ip -> ledger.put(ip, new ClaimFact(ip, POOL, ns, "Namespace " + ns, false, NOW)));
        check("claim " + ns);
        String shown = value != null ? value : optedIn.get(ns).egressIps();
        if (refuse()) {
          served.remove(ns);
          continue;
        }
        annotations.put(ns, new String[] {shown, shown});
        ours.add(ns);
        optedIn.put(ns, new NamespaceState(ns, optedIn.get(ns).uid(), shown, shown));
        check("publish " + ns);
      }
      network(plan, served, cleared);
      release(plan);
    }

    private void network(EgressPlan plan, Map<String, List<Ip>> served, Set<String> cleared) {
      Map<String, Set<Ip>> showing = new TreeMap<>();
      netNamespaces.forEach((ns, ips) -> showing.put(ns, new HashSet<>(ips)));
      Set<String> clear = new TreeSet<>(cleared);
      clear.addAll(EgressWrites.toClear(served, showing));
      served.forEach((ns, ips) -> {
        if (netNamespaces.containsKey(ns) && !refuse()) {
          netNamespaces.put(ns, new TreeSet<>(ips));
          check("NetNamespace " + ns);
        }
      });
      clear.forEach(ns -> {
        if (netNamespaces.containsKey(ns) && !refuse()) {
          netNamespaces.put(ns, new TreeSet<>());
          check("clear NetNamespace " + ns);
        }
      });
      Set<Ip> servedIps = new HashSet<>();
      served.values().forEach(servedIps::addAll);
      Set<Ip> stuck = new HashSet<>();
      for (var e : hostSubnets.entrySet()) { // removals first
        Set<Ip> want = plan.placement().assignments().getOrDefault(e.getKey(), new TreeSet<>());
        Set<Ip> leaving = new HashSet<>(e.getValue());
        leaving.removeIf(ip -> want.contains(ip) && servedIps.contains(ip));
        if (!leaving.isEmpty() && refuse()) {
          stuck.addAll(leaving);
        } else {
          e.getValue().removeAll(leaving);
          check("HostSubnet removals " + e.getKey());
        }
      }
      for (var e : hostSubnets.entrySet()) { // then additions, none of an address still stuck elsewhere
        Set<Ip> want = plan.placement().assignments().getOrDefault(e.getKey(), new TreeSet<>());
        List<Ip> adding = want.stream().filter(servedIps::contains).filter(ip -> !e.getValue().contains(ip))
            .filter(ip -> !stuck.contains(ip)).toList();
        if (!adding.isEmpty() && !refuse()) {
          e.getValue().addAll(adding);
          check("HostSubnet additions " + e.getKey());
        }
      }
    }

    private void release(EgressPlan plan) {
      EgressWrites.Release r = EgressWrites.release(plan.toRelease(), this::shown);
      kept += r.kept().size();
      r.now().forEach(ip -> {
        ledger.remove(ip);
        check("release " + ip);
      });
    }

    /** Where an address is shown, as the reconciler reads it after its writes. */
    private Optional<EgressWrites.Sighting> shown(Ip ip) {
      String holder = ledger.get(ip).ownerName();
      String[] a = annotations.get(holder);
      if (a != null && IncrementalPlanPropertiesTest.World.parsed(a[0]).contains(ip)) {
        return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.ANNOTATION, holder));
      }
      for (var e : netNamespaces.entrySet()) {
        if (e.getValue().contains(ip)) {
          return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.NET_NAMESPACE, e.getKey()));
        }
      }
      for (var e : hostSubnets.entrySet()) {
        if (e.getValue().contains(ip)) {
          return Optional.of(new EgressWrites.Sighting(EgressWrites.Surface.HOST_SUBNET, e.getKey()));
        }
      }
      return Optional.empty();
    }

    /** The invariants, after one single write. */
    private void check(String write) {
      String at = "seed " + seed + " step " + step + " after " + write;
      Map<Ip, Set<String>> holders = new HashMap<>();
      annotations.forEach((ns, a) -> {
        if (a[0] != null && ours.contains(ns)) {
          IncrementalPlanPropertiesTest.World.parsed(a[0]).forEach(ip -> holders.computeIfAbsent(ip, k -> new TreeSet<>()).add(ns));
        }
      });
      netNamespaces.forEach((ns, ips) -> ips.forEach(ip -> holders.computeIfAbsent(ip, k -> new TreeSet<>()).add(ns)));
      holders.forEach((ip, who) -> {
        assertThat(who).as(at + ": namespaces showing " + ip).hasSize(1);
        ClaimFact c = ledger.get(ip);
        assertThat(c).as(at + ": " + ip + " shown by " + who + " but free").isNotNull();
        assertThat(who).as(at + ": " + ip + " claimed by " + c.ownerName()).containsExactly(c.ownerName());
        String before = lastHolder.put(ip, c.ownerName());
        if (before != null && !before.equals(c.ownerName())) {
          handedOver++;
        }
      });
      Map<Ip, Integer> onNodes = new HashMap<>();
      hostSubnets.values().forEach(ips -> ips.forEach(ip -> onNodes.merge(ip, 1, Integer::sum)));
      onNodes.forEach((ip, n) -> assertThat(n).as(at + ": HostSubnets hosting " + ip).isEqualTo(1));
    }

    private void change() {
      List<String> names = new ArrayList<>(annotations.keySet());
      String some = names.isEmpty() ? null : names.get(random.nextInt(names.size()));
      switch (random.nextInt(7)) {
        case 0, 1 -> { // opts in (a new namespace, or one that had left)
          String ns = "ns" + random.nextInt(8);
          annotations.putIfAbsent(ns, new String[] {null, null});
          netNamespaces.putIfAbsent(ns, new TreeSet<>());
          String[] a = annotations.get(ns);
          optedIn.putIfAbsent(ns, new NamespaceState(ns, "u" + uids++, a[0], a[1]));
        }
        case 2 -> { // opts out: its annotation and NetNamespace stay until we clear them
          if (some != null) {
            optedIn.remove(some);
          }
        }
        case 3 -> { // the user writes an address (maybe another namespace's)
          if (some != null) {
            String value = A.first().toString().replaceAll("\\.0$", "." + (1 + random.nextInt(6)));
            annotations.get(some)[0] = value;
            ours.remove(some);
            optedIn.computeIfPresent(some, (k, s) -> new NamespaceState(k, s.uid(), value, s.published()));
          }
        }
        case 4 -> { // the user removes the annotation
          if (some != null) {
            annotations.get(some)[0] = null;
            ours.remove(some);
            optedIn.computeIfPresent(some, (k, s) -> new NamespaceState(k, s.uid(), null, s.published()));
          }
        }
        case 5 -> { // the namespace is deleted, with its NetNamespace
          if (some != null) {
            optedIn.remove(some);
            annotations.remove(some);
            ours.remove(some);
            netNamespaces.remove(some);
          }
        }
        default -> a2Ready = !a2Ready;
      }
    }

    private EgressInputs inputs() {
      List<NodeFacts> nodes = List.of(node("a1", "192.0.2.7", true), node("a2", "192.0.2.6", a2Ready));
      return new EgressInputs(IPAM, new EgressIPAMSpec(List.of(new CIDRAssignment(A.text(), "a", null)), "zone", null,
          null, 6, null), new ArrayList<>(optedIn.values()), new ArrayList<>(ledger.values()), nodes,
          EgressInputs.PlatformNetwork.BARE_METAL, Map.of());
    }

    private NodeFacts node(String name, String own, boolean ready) {
      return new NodeFacts(name, Map.of("zone", "a"), null, new HealthObservation(name, NOW.minusSeconds(300), ready),
          Set.of(Ip.parse(own)), Set.copyOf(hostSubnets.get(name)), false, null);
    }
  }
}
