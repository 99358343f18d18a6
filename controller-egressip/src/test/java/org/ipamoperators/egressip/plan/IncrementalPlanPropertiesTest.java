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
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.failover.HealthObservation;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.junit.jupiter.api.Test;

/**
 * The incremental decision against the full one, over random histories of one EgressIPAM: namespaces
 * opting in and out, annotations written, removed or garbled, the plan persisted (claims, annotations,
 * hosting) or not, claims of others appearing and going, one of our claims lost, a node failing and
 * the spec changing; on a cloud (half the histories) also addresses left on the interfaces, marked
 * ours or not, in our CIDRs or not (orphans, issue 14). After every step the decision made from the
 * previous step's memory must equal the full decision for the same inputs, orphans included, and an
 * orphan taken off is one nobody claims or uses, marked ours, in our CIDRs, seen through the grace. QuickTheories draws the seed; a failure names it, and {@code
 * World.run(seed)} replays it.
 */
class IncrementalPlanPropertiesTest {
  private static final String IPAM = "t";
  private static final String POOL = EgressPolicy.pool(IPAM);
  private static final Instant NOW = Instant.parse("2026-01-01T00:10:00Z");
  private static final IpRange A = IpRange.parse("192.0.2.0/28");
  private static final IpRange B = IpRange.parse("198.51.100.0/28");

  @Test
  void theIncrementalDecisionIsTheFullDecision() {
    AtomicLong reused = new AtomicLong();
    AtomicLong placementsReused = new AtomicLong();
    AtomicLong served = new AtomicLong();
    AtomicLong orphans = new AtomicLong();
    qt().withExamples(150).forAll(longs().all()).checkAssert(seed -> {
      World.Totals t = World.run(seed);
      reused.addAndGet(t.reused());
      placementsReused.addAndGet(t.placementsReused());
      served.addAndGet(t.served());
      orphans.addAndGet(t.orphansTakenOff());
    });
    assertThat(orphans.get()).isGreaterThan(20);
    // Not vacuous: the histories reach settled namespaces and reused placements.
    assertThat(reused.get()).isGreaterThan(500);
    assertThat(placementsReused.get()).isGreaterThan(50);
    assertThat(served.get()).isGreaterThan(reused.get());
  }

  /** One random history. */
  static final class World {
    record Totals(long reused, long placementsReused, long served, long orphansTakenOff) {}

    private final SplittableRandom random;
    private final Map<String, NamespaceState> namespaces = new TreeMap<>();
    private final Map<Ip, ClaimFact> ledger = new HashMap<>();
    private final Map<String, Set<Ip>> hosting = new HashMap<>();
    private final boolean cloud;
    /** Addresses left on an interface outside the plan: node to address to whether it is marked ours. */
    private final Map<String, Map<Ip, Boolean>> left = new TreeMap<>();
    private boolean a2Ready = true;
    private boolean reserved;
    private int uids;

    private World(long seed) {
      random = new SplittableRandom(seed);
      cloud = random.nextBoolean();
    }

    static Totals run(long seed) {
      World w = new World(seed);
      EgressPlanner.Memory memory = EgressPlanner.Memory.NONE;
      EgressDecision last = null;
      long reused = 0;
      long placements = 0;
      long served = 0;
      long takenOff = 0;
      Orphans.Watch watch = Orphans.Watch.NONE;
      for (int step = 0; step < 40; step++) {
        Instant now = NOW.plusSeconds(12L * step);
        int op = w.random.nextInt(100);
        if (op < 40 && last != null) {
          w.persist(last);
        } else {
          w.change(op);
        }
        EgressInputs in = w.inputs();
        EgressDecision incremental = EgressPolicy.decide(in, Map.of(), now, memory, watch);
        EgressDecision full = EgressPolicy.decide(in, Map.of(), now, EgressPlanner.Memory.NONE, watch);
        assertThat(incremental.plan()).as("seed %d step %d", seed, step).isEqualTo(full.plan());
        assertThat(incremental.nodes()).as("seed %d step %d", seed, step).isEqualTo(full.nodes());
        assertThat(incremental.orphans()).as("seed %d step %d", seed, step).isEqualTo(full.orphans());
        invariants(seed, step, full.plan());
        w.orphanInvariants(seed, step, in, full, now);
        takenOff += full.orphans().due().size();
        watch = incremental.orphans().next();
        reused += incremental.reused();
        placements += incremental.placementReused() ? 1 : 0;
        served += incremental.plan().served().size();
        memory = incremental.memory();
        last = incremental;
      }
      return new Totals(reused, placements, served, takenOff);
    }

    /** An orphan due is marked ours on its node, in our CIDRs, claimed and used by nobody, seen through the grace. */
    private void orphanInvariants(long seed, int step, EgressInputs in, EgressDecision d, Instant now) {
      Set<Ip> used = new HashSet<>();
      d.plan().served().values().forEach(used::addAll);
      d.plan().placement().assignments().values().forEach(used::addAll);
      in.namespaces().forEach(ns -> used.addAll(parsed(ns.egressIps())));
      for (Orphans.Orphan o : d.orphans().due()) {
        String at = "seed " + seed + " step " + step + " orphan " + o;
        assertThat(cloud).as(at).isTrue();
        // marked on its node's interface: left there marked, or placed by an earlier plan and its claim since lost
        assertThat(in.nodes()).as(at).anySatisfy(n -> {
          assertThat(n.name()).isEqualTo(o.node());
          assertThat(n.cloud().marked()).contains(o.address());
        });
        assertThat(left.getOrDefault(o.node(), Map.of()).get(o.address())).as(at).isNotEqualTo(Boolean.FALSE);
        assertThat(A.contains(o.address()) || B.contains(o.address())).as(at).isTrue();
        assertThat(ledger).as(at).doesNotContainKey(o.address());
        assertThat(used).as(at).doesNotContain(o.address());
        assertThat(o.passes()).as(at).isGreaterThanOrEqualTo(2);
        assertThat(java.time.Duration.between(o.since(), now)).as(at).isGreaterThanOrEqualTo(
            java.time.Duration.ofSeconds(30));
      }
    }

    /** The addresses of an egressips value, entries that are not addresses left out. */
    static Set<Ip> parsed(String value) {
      Set<Ip> out = new HashSet<>();
      if (value != null) {
        for (String part : value.split(",")) {
          try {
            out.add(Ip.parse(part.trim()));
          } catch (RuntimeException e) {
            // garbled on purpose
          }
        }
      }
      return out;
    }

    /** No address served twice; each served namespace one address per CIDR, in order. */
    private static void invariants(long seed, int step, EgressPlan plan) {
      Set<Ip> seen = new HashSet<>();
      plan.served().forEach((ns, ips) -> {
        assertThat(ips).as("seed %d step %d %s", seed, step, ns).hasSize(2);
        assertThat(A.contains(ips.get(0)) && B.contains(ips.get(1))).as("seed %d step %d %s", seed, step, ns)
            .isTrue();
        ips.forEach(ip -> assertThat(seen.add(ip)).as("seed %d step %d %s twice", seed, step, ip).isTrue());
      });
    }

    private EgressIPAMSpec spec() {
      return new EgressIPAMSpec(List.of(new CIDRAssignment(A.text(), "a", reserved ? List.of("192.0.2.5") : null),
          new CIDRAssignment(B.text(), "b", null)), "zone", null, null, 6, null);
    }

    private EgressInputs inputs() {
      List<NodeFacts> nodes = List.of(
          node("a1", "a", "192.0.2.1", true),
          node("a2", "a", "192.0.2.2", a2Ready),
          node("b1", "b", "198.51.100.1", true));
      return new EgressInputs(IPAM, spec(), new ArrayList<>(namespaces.values()), new ArrayList<>(ledger.values()),
          nodes, cloud ? new EgressInputs.PlatformNetwork(true, false, false, true)
              : EgressInputs.PlatformNetwork.BARE_METAL, Map.of());
    }

    private NodeFacts node(String name, String zone, String own, boolean ready) {
      Set<Ip> placed = hosting.getOrDefault(name, Set.of());
      NodeFacts.CloudView view = null;
      if (cloud) {
        // the interface: what the plan placed (marked ours) and what was left on it
        Set<Ip> secondaries = new HashSet<>(placed);
        Set<Ip> marked = new HashSet<>(placed);
        left.getOrDefault(name, Map.of()).forEach((ip, ours) -> {
          secondaries.add(ip);
          if (ours) {
            marked.add(ip);
          }
        });
        view = new NodeFacts.CloudView(secondaries, 0, marked);
      }
      return new NodeFacts(name, Map.of("zone", zone), null,
          new HealthObservation(name, NOW.minusSeconds(300), ready), Set.of(Ip.parse(own)),
          cloud ? Set.of() : Set.copyOf(placed), cloud, view);
    }

    /** What the reconciler's persist step leaves in the cluster when every write succeeds. */
    private void persist(EgressDecision decision) {
      EgressPlan plan = decision.plan();
      decision.orphans().due().forEach(o -> left.getOrDefault(o.node(), new HashMap<>()).remove(o.address()));
      plan.toRelease().forEach(ip -> {
        ClaimFact c = ledger.get(ip);
        if (c != null && POOL.equals(c.pool())) {
          ledger.remove(ip);
        }
      });
      for (var e : plan.served().entrySet()) {
        String ns = e.getKey();
        NamespaceState state = namespaces.get(ns);
        if (state == null) {
          continue;
        }
        List<Ip> toClaim = plan.toClaim().getOrDefault(ns, List.of());
        if (toClaim.stream().anyMatch(ledger::containsKey)) {
          continue; // someone was first: the next pass decides again
        }
        toClaim.forEach(ip -> ledger.put(ip, new ClaimFact(ip, POOL, ns, "Namespace " + ns, false, NOW)));
        String value = plan.annotations().get(ns);
        String shown = value != null ? value : state.egressIps();
        namespaces.put(ns, new NamespaceState(ns, state.uid(), shown, shown));
      }
      hosting.clear();
      plan.placement().assignments().forEach((node, ips) -> hosting.put(node, new HashSet<>(ips)));
    }

    private void change(int op) {
      List<String> names = new ArrayList<>(namespaces.keySet());
      String some = names.isEmpty() ? null : names.get(random.nextInt(names.size()));
      switch (op % 9) {
        case 0, 1 -> {
          String ns = "ns" + random.nextInt(16);
          namespaces.putIfAbsent(ns, new NamespaceState(ns, "u" + uids++, null, null));
        }
        case 2 -> {
          if (some != null) {
            namespaces.remove(some);
          }
        }
        case 3 -> {
          if (some != null) {
            NamespaceState s = namespaces.get(some);
            namespaces.put(some, new NamespaceState(some, s.uid(), annotation(), s.published()));
          }
        }
        case 4 -> {
          if (some != null) {
            NamespaceState s = namespaces.get(some);
            namespaces.put(some, new NamespaceState(some, s.uid(), null, s.published()));
          }
        }
        case 5 -> {
          Ip ip = address(random.nextBoolean() ? A : B);
          ClaimFact c = ledger.get(ip);
          if (c == null) {
            ledger.put(ip, new ClaimFact(ip, "vip/x", "web", "Service default/web (vip)", false, NOW));
          } else if (!POOL.equals(c.pool())) {
            ledger.remove(ip);
          }
        }
        case 6 -> {
          List<Ip> ours = ledger.values().stream().filter(c -> POOL.equals(c.pool())).map(ClaimFact::address)
              .sorted().toList();
          if (!ours.isEmpty()) {
            ledger.remove(ours.get(random.nextInt(ours.size()))); // lost, or released by hand
          }
        }
        case 7 -> {
          if (cloud && random.nextBoolean()) {
            // an address left on an interface by an earlier version (marked) or another tool (not),
            // in our CIDRs or not
            String node = List.of("a1", "a2", "b1").get(random.nextInt(3));
            Ip ip = random.nextInt(4) == 0 ? Ip.parse("203.0.113." + (1 + random.nextInt(14)))
                : address(random.nextBoolean() ? A : B);
            left.computeIfAbsent(node, k -> new TreeMap<>()).put(ip, random.nextInt(3) > 0);
          } else {
            a2Ready = !a2Ready;
          }
        }
        default -> reserved = !reserved;
      }
    }

    private String annotation() {
      return switch (random.nextInt(5)) {
        case 0 -> "not-an-address";
        case 1 -> address(A).toString();
        case 2 -> address(B) + "," + address(A);
        default -> address(A) + "," + address(B);
      };
    }

    private Ip address(IpRange r) {
      return Ip.parse(r.first().toString().replaceAll("\\.0$", "." + (1 + random.nextInt(14))));
    }
  }
}
