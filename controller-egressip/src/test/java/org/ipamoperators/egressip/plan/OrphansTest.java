package org.ipamoperators.egressip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.failover.HealthObservation;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.junit.jupiter.api.Test;

/**
 * Orphans (issue 14): an address marked ours on a described node's interface, inside the IPAM's
 * CIDRs, claimed by nobody and used by no namespace, is planned to be taken off only after the
 * grace (two passes and 30 s); everything else on an interface is never touched.
 */
class OrphansTest {
  private static final Instant T0 = Instant.parse("2026-11-23T12:00:00Z");
  private static final EgressIPAMSpec SPEC = new EgressIPAMSpec(List.of(
      new CIDRAssignment("192.0.2.0/24", "a", null)), "zone", null, null, null, 10);
  private static final EgressInputs.PlatformNetwork CLOUD = new EgressInputs.PlatformNetwork(true, true, true, true);
  private static final Ip ORPHAN = Ip.parse("192.0.2.50");

  private static NodeFacts node(String name, NodeFacts.CloudView cloud) {
    return new NodeFacts(name, Map.of("zone", "a"), null, new HealthObservation(name, T0.minusSeconds(3600), true),
        Set.of(), Set.of(), true, cloud);
  }

  private static NodeFacts.CloudView eni(Set<Ip> secondaries, Set<Ip> marked) {
    return new NodeFacts.CloudView(secondaries, 10, marked);
  }

  private static EgressInputs inputs(List<NamespaceState> ns, List<ClaimFact> claims, NodeFacts... nodes) {
    return new EgressInputs("x", SPEC, ns, claims, List.of(nodes), CLOUD,
        Map.of("192.0.2.0/24", new EgressInputs.InUse(Set.of(ORPHAN), null)));
  }

  /** Passes at the given seconds after T0, each from the previous one's sightings; the last decision. */
  private static EgressDecision passes(EgressInputs in, long... seconds) {
    Orphans.Watch watch = Orphans.Watch.NONE;
    EgressDecision d = null;
    for (long s : seconds) {
      d = EgressPolicy.decide(in, Map.of(), T0.plusSeconds(s), EgressPlanner.Memory.NONE, watch);
      watch = d.orphans().next();
    }
    return d;
  }

  @Test
  void anOrphanIsTakenOffOnlyAfterTwoPassesAndTheGrace() {
    EgressInputs in = inputs(List.of(), List.of(), node("n1", eni(Set.of(ORPHAN), Set.of(ORPHAN))));
    EgressDecision first = passes(in, 0);
    assertThat(first.orphans().due()).isEmpty();
    assertThat(first.orphans().next().seen()).containsKey(ORPHAN);
    assertThat(first.nextReview()).isEqualTo(Duration.ofSeconds(30)); // a pass comes when the grace ends
    assertThat(passes(in, 0, 10).orphans().due()).isEmpty(); // two passes, 10 s
    assertThat(passes(in, 0, 10, 29).orphans().due()).isEmpty(); // three passes, 29 s
    assertThat(passes(in, 40).orphans().due()).isEmpty(); // one pass, however late
    EgressDecision due = passes(in, 0, 10, 30);
    assertThat(due.orphans().due()).singleElement().satisfies(o -> {
      assertThat(o.address()).isEqualTo(ORPHAN);
      assertThat(o.node()).isEqualTo("n1");
      assertThat(o.reason(T0.plusSeconds(30))).contains("claimed by nobody").contains("3 passes over 30 s");
    });
    // Configurable: a longer grace waits longer.
    Orphans.Watch longer = Orphans.Watch.start(new Orphans.Grace(Duration.ofSeconds(120), 3));
    EgressDecision d = EgressPolicy.decide(in, Map.of(), T0, EgressPlanner.Memory.NONE, longer);
    d = EgressPolicy.decide(in, Map.of(), T0.plusSeconds(60), EgressPlanner.Memory.NONE, d.orphans().next());
    d = EgressPolicy.decide(in, Map.of(), T0.plusSeconds(90), EgressPlanner.Memory.NONE, d.orphans().next());
    assertThat(d.orphans().due()).isEmpty();
    d = EgressPolicy.decide(in, Map.of(), T0.plusSeconds(120), EgressPlanner.Memory.NONE, d.orphans().next());
    assertThat(d.orphans().due()).extracting(Orphans.Orphan::address).containsExactly(ORPHAN);
    // Fewer than two passes cannot be configured.
    assertThat(new Orphans.Grace(Duration.ZERO, 1).passes()).isEqualTo(2);
  }

  @Test
  void aClaimedAnAddressOutsideTheCidrsAndAnUnmarkedAddressAreNeverTakenOff() {
    Ip claimed = Ip.parse("192.0.2.60");
    Ip outside = Ip.parse("203.0.113.9");
    Ip unmarked = Ip.parse("192.0.2.70");
    Ip ours = Ip.parse("192.0.2.80");
    EgressInputs in = inputs(List.of(new NamespaceState("ns0", "u0", "192.0.2.80", "192.0.2.80")),
        List.of(new ClaimFact(claimed, "vip/other", "web", "Service default/web (vip)", false, T0),
            new ClaimFact(ours, "egressipam/x", "ns0", "Namespace ns0 (egressip)", false, T0)),
        node("n1", eni(Set.of(claimed, outside, unmarked, ours, ORPHAN), Set.of(claimed, outside, ours, ORPHAN))));
    EgressDecision d = passes(in, 0, 15, 30, 60, 600);
    assertThat(d.orphans().due()).extracting(Orphans.Orphan::address).containsExactly(ORPHAN);
    assertThat(d.orphans().next().seen()).containsOnlyKeys(ORPHAN);
  }

  @Test
  void anAddressANamespaceNamesIsNotAnOrphan() {
    // The old operator's address, named by a namespace with no claim yet: the plan takes it over.
    EgressInputs in = inputs(List.of(new NamespaceState("ns0", "u0", ORPHAN.toString(), null)), List.of(),
        node("n1", eni(Set.of(ORPHAN), Set.of(ORPHAN))));
    EgressDecision d = passes(in, 0, 15, 30, 60);
    assertThat(d.plan().toClaim()).containsEntry("ns0", List.of(ORPHAN));
    assertThat(d.orphans().due()).isEmpty();
  }

  @Test
  void anUndescribedNodeHoldsNothingBackAndTakesNothingOff() {
    EgressInputs seen = inputs(List.of(), List.of(), node("n1", eni(Set.of(ORPHAN), Set.of(ORPHAN))));
    EgressInputs failed = inputs(List.of(), List.of(), node("n1", NodeFacts.CloudView.failed("throttled", true)),
        node("n2", eni(Set.of(), Set.of())));
    EgressDecision d = EgressPolicy.decide(seen, Map.of(), T0, EgressPlanner.Memory.NONE, Orphans.Watch.NONE);
    d = EgressPolicy.decide(seen, Map.of(), T0.plusSeconds(15), EgressPlanner.Memory.NONE, d.orphans().next());
    d = EgressPolicy.decide(failed, Map.of(), T0.plusSeconds(30), EgressPlanner.Memory.NONE, d.orphans().next());
    assertThat(d.orphans().due()).isEmpty();
    // the grace starts over once the node is described again
    assertThat(d.orphans().next().seen()).isEmpty();
    d = EgressPolicy.decide(seen, Map.of(), T0.plusSeconds(45), EgressPlanner.Memory.NONE, d.orphans().next());
    assertThat(d.orphans().due()).isEmpty();
    // and a node the cloud was not asked about (no cloud view) neither
    EgressInputs notAsked = inputs(List.of(), List.of(), node("n1", null));
    assertThat(passes(notAsked, 0, 30, 60).orphans().next().seen()).isEmpty();
  }

  @Test
  void bareMetalAndAnInvalidSpecTakeNothingOff() {
    NodeFacts n1 = node("n1", eni(Set.of(ORPHAN), Set.of(ORPHAN)));
    EgressInputs bare = new EgressInputs("x", SPEC, List.of(), List.of(), List.of(n1),
        EgressInputs.PlatformNetwork.BARE_METAL, Map.of());
    assertThat(passes(bare, 0, 30, 60).orphans().due()).isEmpty();
    EgressIPAMSpec invalid = new EgressIPAMSpec(List.of(new CIDRAssignment("192.0.2.0/24", "a", null),
        new CIDRAssignment("192.0.2.0/25", "a", null)), "zone", null, null, null, 10);
    EgressInputs overlapping = new EgressInputs("x", invalid, List.of(), List.of(), List.of(n1), CLOUD, Map.of());
    assertThat(passes(overlapping, 0, 30, 60).orphans().due()).isEmpty();
  }
}
