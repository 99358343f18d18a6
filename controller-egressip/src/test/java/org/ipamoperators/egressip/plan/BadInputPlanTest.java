package org.ipamoperators.egressip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.failover.HealthObservation;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.placement.PlacementOptions;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.junit.jupiter.api.Test;

/** The bad-input corpus's egress findings, pure: a missing spec, huge values in messages. */
class BadInputPlanTest {
  private static final Instant NOW = Instant.parse("2026-11-26T07:00:00Z");
  private static final EgressIPAMSpec ONE = new EgressIPAMSpec(List.of(
      new CIDRAssignment("192.0.2.0/24", "a", null)), "zone", null, null, null, null);

  @Test
  void anIpamWithoutSpecIsAnInvalidSpecNotAnException() {
    NodeFacts node = new NodeFacts("n1", Map.of("zone", "a"), "lots", new HealthObservation("n1", NOW, true),
        Set.of(), Set.of(), false, null);
    EgressInputs in = new EgressInputs("nospec", null, List.of(new NamespaceState("ns1", "u1", null)), List.of(),
        List.of(node), EgressInputs.PlatformNetwork.BARE_METAL, Map.of());
    EgressDecision d = EgressPolicy.decide(in, Map.of(), NOW);
    assertThat(d.plan().specValid()).isFalse();
    assertThat(d.plan().specMessage()).contains("spec is missing");
    assertThat(d.plan().served()).isEmpty();
    assertThat(EgressPolicy.parsableCidrs(null)).isEmpty();
    assertThat(EgressPolicy.describes(null, Map.of(), false)).isFalse();
  }

  @Test
  void aHugeAnnotationIsQuotedShortInItsMessage() {
    String huge = "192.0.2.45,".repeat(7000);
    EgressPlan p = EgressPlanner.plan(ONE, List.of(new NamespaceState("big", "u", huge),
        new NamespaceState("junk", "u", "x".repeat(500))), List.of(),
        List.of(new NodeInfo("a1", "a", true, true, NodeState.UNLIMITED, Set.of(), Set.of())), PlacementOptions.DEFAULT);
    assertThat(p.problems()).hasSize(2).allSatisfy(pr -> assertThat(pr.message()).hasSizeLessThan(300));
    assertThat(p.problems().get(0).message()).contains("(77000 characters)").contains("7001 addresses for 1 CIDR");
    assertThat(p.problems().get(1).message()).contains("(500 characters)");
  }

  @Test
  void aSpecWithHundredsOfProblemsNamesTheFirstFewAndCountsTheRest() {
    List<String> reserved = new ArrayList<>();
    for (int i = 0; i < 999; i++) {
      reserved.add("203.0.113.1");
    }
    EgressIPAMSpec spec = new EgressIPAMSpec(List.of(new CIDRAssignment("203.0.113.128/26", "a", reserved)),
        "zone", null, null, null, null);
    EgressPlan p = EgressPlanner.plan(spec, List.of(), List.of(), List.of(), PlacementOptions.DEFAULT);
    assertThat(p.specProblems()).hasSizeGreaterThan(EgressPlan.PROBLEMS_SHOWN);
    assertThat(p.specMessage()).hasSizeLessThan(2000).endsWith("more problem(s)");
  }
}
