package org.ipamoperators.egressip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.placement.PlacementOptions;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.junit.jupiter.api.Test;

/** The planner alone: the per-namespace rules, without an API server. */
class EgressPlannerTest {
  private static final EgressIPAMSpec TWO_ZONES = new EgressIPAMSpec(List.of(
      new CIDRAssignment("192.0.2.0/24", "a", List.of("192.0.2.1")),
      new CIDRAssignment("198.51.100.0/24", "b", null)), "zone", null, null, null, null);
  private static final List<NodeInfo> NODES = List.of(
      new NodeInfo("a1", "a", true, true, NodeState.UNLIMITED, Set.of(Ip.parse("192.0.2.2")), Set.of()),
      new NodeInfo("b1", "b", true, true, NodeState.UNLIMITED, Set.of(), Set.of()));

  private static EgressPlan plan(EgressIPAMSpec spec, List<NamespaceState> ns, List<ClaimState> claims) {
    return EgressPlanner.plan(spec, ns, claims, NODES, PlacementOptions.DEFAULT);
  }

  private static ClaimState claim(String ip, String ns, boolean published) {
    return new ClaimState(Ip.parse(ip), ns, null, published, null);
  }

  @Test
  void newNamespacesGetOneAddressPerCidrSkippingReservedAndNodeAddresses() {
    EgressPlan p = plan(TWO_ZONES, List.of(new NamespaceState("ns1", "u1", null)), List.of());
    assertThat(p.annotations()).containsEntry("ns1", "192.0.2.3,198.51.100.1");
    assertThat(p.toClaim().get("ns1")).containsExactly(Ip.parse("192.0.2.3"), Ip.parse("198.51.100.1"));
    assertThat(p.placement().assignments().get("a1")).containsExactly(Ip.parse("192.0.2.3"));
  }

  @Test
  void claimedButUnpublishedAddressesAreAdoptedAfterARestart() {
    EgressPlan p = plan(TWO_ZONES, List.of(new NamespaceState("ns1", "u1", null)),
        List.of(claim("192.0.2.77", "ns1", false)));
    assertThat(p.annotations()).containsEntry("ns1", "192.0.2.77,198.51.100.1");
    assertThat(p.toClaim().get("ns1")).containsExactly(Ip.parse("198.51.100.1"));
    assertThat(p.toRelease()).isEmpty();
  }

  @Test
  void aRemovedAnnotationGivesNewAddressesAndReleasesTheOldOnes() {
    EgressPlan p = plan(TWO_ZONES, List.of(new NamespaceState("ns1", "u1", null)),
        List.of(claim("192.0.2.3", "ns1", true), claim("198.51.100.1", "ns1", true)));
    assertThat(p.toRelease()).containsExactlyInAnyOrder(Ip.parse("192.0.2.3"), Ip.parse("198.51.100.1"));
    assertThat(p.annotations().get("ns1")).isEqualTo("192.0.2.4,198.51.100.2");
  }

  @Test
  void claimsOfNamespacesThatLeftAreReleasedAndForeignClaimsAreAvoided() {
    EgressPlan p = plan(TWO_ZONES, List.of(new NamespaceState("ns1", "u1", null)),
        List.of(claim("192.0.2.9", "gone", true),
            new ClaimState(Ip.parse("192.0.2.3"), null, "Service default/web (vip)", false, null)));
    assertThat(p.toRelease()).containsExactly(Ip.parse("192.0.2.9"));
    assertThat(p.annotations().get("ns1")).startsWith("192.0.2.4,"); // .3 is the VIP controller's
  }

  @Test
  void manualAnnotationsAreCheckedOneNamespaceAtATime() {
    EgressPlan p = plan(TWO_ZONES, List.of(
        new NamespaceState("ok", "u", " 192.0.2.50 ,198.51.100.50"),
        new NamespaceState("swapped", "u", "198.51.100.60,192.0.2.60"),
        new NamespaceState("garbage", "u", "192.0.2.x,198.51.100.61"),
        new NamespaceState("node", "u", "192.0.2.2,198.51.100.62"),
        new NamespaceState("x-dup", "u", "192.0.2.50,198.51.100.63"),
        new NamespaceState("fresh", "u", null)), List.of());
    assertThat(p.served()).containsOnlyKeys("ok", "fresh");
    assertThat(p.annotations()).containsEntry("ok", "192.0.2.50,198.51.100.50"); // spaces trimmed
    assertThat(p.problems()).extracting(NamespaceProblem::namespace).containsExactly("garbage", "node", "swapped", "x-dup");
    assertThat(p.problems()).extracting(NamespaceProblem::message).anySatisfy(m -> assertThat(m).contains("node a1"))
        .anySatisfy(m -> assertThat(m).contains("held by namespace ok"))
        .anySatisfy(m -> assertThat(m).contains("198.51.100.60 is not in CIDR 192.0.2.0/24"));
    assertThat(p.problems()).allMatch(NamespaceProblem::rejected);
  }

  @Test
  void specProblemsStopEverythingAndNameTheField() {
    EgressIPAMSpec bad = new EgressIPAMSpec(List.of(
        new CIDRAssignment("10.0.0.5/24", "a", null),
        new CIDRAssignment("10.0.0.0/25", "a", List.of("10.9.9.9"))), "zone", null, null, null, null);
    List<String> messages = EgressPlanner.validate(bad).stream().map(x -> x.message()).toList();
    assertThat(messages).anySatisfy(m -> assertThat(m).startsWith("cidrAssignments[0]").contains("did you mean 10.0.0.0/24?"))
        .anySatisfy(m -> assertThat(m).contains("cidrAssignments[1]").contains("10.9.9.9"))
        .noneSatisfy(m -> assertThat(m).contains("labelValue"));
    EgressPlan p = plan(bad, List.of(new NamespaceState("ns1", "u", null)), List.of());
    assertThat(p.specValid()).isFalse();
    assertThat(p.toClaim()).isEmpty();
    assertThat(p.annotations()).isEmpty();
    assertThat(EgressPlanner.validate(new EgressIPAMSpec(List.of(new CIDRAssignment("192.0.2.0/24", "a", null),
        new CIDRAssignment("192.0.2.128/25", "b", null)), "zone", null, null, null, null)))
        .anySatisfy(x -> assertThat(x.message()).contains("overlaps"));
  }

  @Test
  void ipv6CidrsWork() {
    EgressIPAMSpec v6 = new EgressIPAMSpec(List.of(new CIDRAssignment("2001:db8:e::/64", "a", null)), "zone",
        null, "STICKY", null, null);
    EgressPlan p = plan(v6, List.of(new NamespaceState("ns1", "u", null)), List.of());
    Ip ip = p.served().get("ns1").get(0);
    assertThat(ip.isIPv4()).isFalse();
    assertThat(plan(v6, List.of(new NamespaceState("ns1", "u", null)), List.of()).served().get("ns1")).containsExactly(ip);
  }

  @Test
  void anExhaustedCidrLeavesTheNamespacePendingWithoutPartialClaims() {
    EgressIPAMSpec tiny = new EgressIPAMSpec(List.of(new CIDRAssignment("192.0.2.8/31", "a", null),
        new CIDRAssignment("198.51.100.0/24", "b", null)), "zone", null, null, null, null);
    EgressPlan p = plan(tiny, List.of(new NamespaceState("n1", "u", null), new NamespaceState("n2", "u", null),
        new NamespaceState("n3", "u", null)), List.of());
    assertThat(p.served()).containsOnlyKeys("n1", "n2");
    assertThat(p.toClaim()).doesNotContainKey("n3");
    assertThat(p.problems()).singleElement().satisfies(x -> {
      assertThat(x.reason()).isEqualTo(NamespaceProblem.Reason.CIDR_EXHAUSTED);
      assertThat(x.rejected()).isFalse();
    });
  }

  @Test
  void aWrittenAddressNotYetClaimedIsNeverAlsoAllocated() {
    // b-old's annotation names 192.0.2.3 but its claim is gone; a-new is allocated first (by name).
    EgressPlan p = plan(TWO_ZONES, List.of(new NamespaceState("a-new", "u1", null),
        new NamespaceState("b-old", "u2", "192.0.2.3,198.51.100.5", "192.0.2.3,198.51.100.5")), List.of());
    assertThat(p.served().get("a-new")).containsExactly(Ip.parse("192.0.2.3"), Ip.parse("198.51.100.1"));
    assertThat(p.served()).doesNotContainKey("b-old");
    assertThat(p.problems()).singleElement().satisfies(x -> {
      assertThat(x.namespace()).isEqualTo("b-old");
      assertThat(x.reason()).isEqualTo(NamespaceProblem.Reason.ADDRESS_TAKEN);
    });
    // The other order: the written address is taken first, the allocator skips it.
    EgressPlan q = plan(TWO_ZONES, List.of(new NamespaceState("a-old", "u2", "192.0.2.3,198.51.100.5",
        "192.0.2.3,198.51.100.5"), new NamespaceState("b-new", "u1", null)), List.of());
    assertThat(q.served().get("a-old")).containsExactly(Ip.parse("192.0.2.3"), Ip.parse("198.51.100.5"));
    assertThat(q.served().get("b-new")).containsExactly(Ip.parse("192.0.2.4"), Ip.parse("198.51.100.1"));
  }
}
