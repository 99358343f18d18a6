package org.ipamoperators.egressip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.failover.HealthObservation;
import org.ipamoperators.core.failover.NodeCondition;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.junit.jupiter.api.Test;

/**
 * The egress policy that used to live in the reconciler (review M1, M2), now pure: capacity
 * sharing between IPAMs, suspect nodes, blind CIDRs, failover history, capacity annotations, the
 * publication record.
 */
class EgressPolicyTest {
  private static final Instant NOW = Instant.parse("2026-11-23T12:00:00Z");
  private static final EgressIPAMSpec ONE_ZONE = new EgressIPAMSpec(List.of(
      new CIDRAssignment("192.0.2.0/24", "a", null)), "zone", null, null, 2, 10);
  private static final EgressInputs.PlatformNetwork CLOUD = new EgressInputs.PlatformNetwork(true, true, true, true);

  private static NodeFacts node(String name, boolean ready, String capacity, String... hosting) {
    Set<Ip> hosted = new java.util.HashSet<>();
    for (String h : hosting) {
      hosted.add(Ip.parse(h));
    }
    return new NodeFacts(name, Map.of("zone", "a"), capacity, new HealthObservation(name, NOW.minusSeconds(3600), ready),
        Set.of(), hosted, false, null);
  }

  private static EgressInputs inputs(String ipam, List<NamespaceState> ns, List<ClaimFact> claims, List<NodeFacts> nodes) {
    return new EgressInputs(ipam, ONE_ZONE, ns, claims, nodes, EgressInputs.PlatformNetwork.BARE_METAL, Map.of());
  }

  private static ClaimFact claim(String ip, String pool, String ns) {
    return new ClaimFact(Ip.parse(ip), pool, ns, "Namespace " + ns + " (egressip)", false, NOW);
  }

  private static List<NamespaceState> namespaces(int n) {
    List<NamespaceState> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new NamespaceState("ns" + i, "u" + i, null));
    }
    return out;
  }

  @Test
  void addressesOfAnIpamNamedBeforeUseTheSharedNodesCapacity() {
    // "a-first" placed one address on n1 (capacity 2): "b-second" may place one more there, not two.
    EgressDecision d = EgressPolicy.decide(inputs("b-second", namespaces(2),
            List.of(claim("192.0.2.200", "egressipam/a-first", "other")),
            List.of(node("n1", true, null, "192.0.2.200"), node("n2", true, null))), Map.of(), NOW);
    assertThat(d.nodes()).filteredOn(n -> n.name().equals("n1")).singleElement()
        .satisfies(n -> assertThat(n.capacity()).isEqualTo(1));
    // An IPAM named after does not count: the earlier name keeps its placement.
    EgressDecision first = EgressPolicy.decide(inputs("a-first", namespaces(1),
            List.of(claim("192.0.2.201", "egressipam/z-later", "other")),
            List.of(node("n1", true, null, "192.0.2.201"))), Map.of(), NOW);
    assertThat(first.nodes().get(0).capacity()).isEqualTo(2);
  }

  @Test
  void aSuspectNodeKeepsWhatItHostsAndTakesNothingNewAndFailsAfterTheGrace() {
    NodeFacts flaky = new NodeFacts("n1", Map.of("zone", "a"), null,
        new HealthObservation("n1", NOW.minusSeconds(5), false), Set.of(), Set.of(Ip.parse("192.0.2.1")), false, null);
    List<ClaimFact> claims = List.of(claim("192.0.2.1", "egressipam/x", "ns0"));
    List<NamespaceState> ns = List.of(new NamespaceState("ns0", "u0", "192.0.2.1", "192.0.2.1"),
        new NamespaceState("ns1", "u1", null));
    EgressDecision d = EgressPolicy.decide(inputs("x", ns, claims, List.of(flaky, node("n2", true, null))), Map.of(), NOW);
    assertThat(d.verdicts().get("n1").condition()).isEqualTo(NodeCondition.SUSPECT);
    assertThat(d.nodes().get(0).capacity()).isEqualTo(1); // what it hosts, nothing more
    assertThat(d.plan().placement().assignments().get("n1")).containsExactly(Ip.parse("192.0.2.1"));
    assertThat(d.nextReview()).isNotNull(); // the verdict changes by itself at the end of the grace
    // Past the grace: failed, its address moves, and the failure is remembered for the next pass.
    EgressDecision later = EgressPolicy.decide(inputs("x", ns, claims, List.of(flaky, node("n2", true, null))),
        Map.of(), NOW.plusSeconds(10));
    assertThat(later.verdicts().get("n1").failed()).isTrue();
    assertThat(later.failureHistory()).containsKey("n1");
    assertThat(later.plan().placement().assignments().get("n2")).contains(Ip.parse("192.0.2.1"));
  }

  @Test
  void aRecoveredNodeRemembersItsFailureAndTakesNothingNewInTheRecoveryWindow() {
    NodeFacts recovered = new NodeFacts("n1", Map.of("zone", "a"), null,
        new HealthObservation("n1", NOW.minusSeconds(1), true), Set.of(), Set.of(), false, null);
    EgressDecision d = EgressPolicy.decide(inputs("x", namespaces(1), List.of(), List.of(recovered, node("n2", true, null))),
        Map.of("n1", NOW.minusSeconds(20)), NOW);
    assertThat(d.plan().placement().assignments().getOrDefault("n1", new java.util.TreeSet<>())).isEmpty();
    EgressDecision forgetful = EgressPolicy.decide(inputs("x", namespaces(1), List.of(),
        List.of(recovered, node("n2", true, null))), Map.of(), NOW);
    assertThat(forgetful.verdicts().get("n1").condition()).isEqualTo(NodeCondition.HEALTHY);
  }

  @Test
  void aCidrWhoseUsageCannotBeReadIsBlindNothingNewIsClaimedThere() {
    NodeFacts n1 = new NodeFacts("n1", Map.of("zone", "a"), null, new HealthObservation("n1", NOW.minusSeconds(3600), true),
        Set.of(), Set.of(), true, new NodeFacts.CloudView(Set.of(), 10));
    EgressInputs in = new EgressInputs("x", ONE_ZONE, namespaces(1), List.of(), List.of(n1), CLOUD,
        Map.of("192.0.2.0/24", new EgressInputs.InUse(Set.of(), "DescribeSubnets: throttled")));
    EgressDecision d = EgressPolicy.decide(in, Map.of(), NOW);
    assertThat(d.deferred()).containsKey("ns0");
    assertThat(d.platformProblems()).contains("DescribeSubnets: throttled");
    // Readable: what the platform sees in use is skipped.
    EgressInputs seen = new EgressInputs("x", ONE_ZONE, namespaces(1), List.of(), List.of(n1), CLOUD,
        Map.of("192.0.2.0/24", new EgressInputs.InUse(Set.of(Ip.parse("192.0.2.1")), null)));
    EgressDecision ok = EgressPolicy.decide(seen, Map.of(), NOW);
    assertThat(ok.deferred()).isEmpty();
    assertThat(ok.plan().annotations()).containsEntry("ns0", "192.0.2.2");
    // and the cloud is told to attach it on the node the placement chose
    assertThat(EgressPolicy.cloudChanges(ok.plan(), Set.of(Ip.parse("192.0.2.2")), true))
        .containsExactly(AddressChange.attach(Ip.parse("192.0.2.2"), "n1"));
  }

  @Test
  void anUnusableCapacityAnnotationIsReportedAndTheIpamsCapacityUsed() {
    EgressDecision d = EgressPolicy.decide(inputs("x", namespaces(1), List.of(),
        List.of(node("n1", true, "ten"), node("n2", true, "-1"), node("n3", true, " 3 "))), Map.of(), NOW);
    assertThat(d.capacityProblems()).containsOnlyKeys("n1", "n2");
    assertThat(d.capacityProblems().get("n1")).contains("'ten'").contains("nodeCapacity 2");
    assertThat(d.nodes()).extracting(NodeInfo::capacity).containsExactly(2, 2, 3);
    assertThat(EgressPolicy.decide(inputs("x", namespaces(1), List.of(), List.of(node("n1", true, null))),
        Map.of(), NOW).nodes().get(0).capacity()).isEqualTo(2);
    assertThat(NodeState.UNLIMITED).isNotEqualTo(2);
  }

  @Test
  void thePublicationRecordOnTheNamespaceTellsARemovedAnnotationFromARestart() {
    List<ClaimFact> claims = List.of(claim("192.0.2.7", "egressipam/x", "ns0"));
    // Claimed, never published (a restart in between): the address is kept.
    EgressDecision restart = EgressPolicy.decide(inputs("x", List.of(new NamespaceState("ns0", "u", null, null)), claims,
        List.of(node("n1", true, null))), Map.of(), NOW);
    assertThat(restart.plan().annotations()).containsEntry("ns0", "192.0.2.7");
    assertThat(restart.plan().toRelease()).isEmpty();
    // Published, then the user removed egressips: new address, the old one released, as the old operator did.
    EgressDecision removed = EgressPolicy.decide(inputs("x", List.of(new NamespaceState("ns0", "u", null, "192.0.2.7")),
        claims, List.of(node("n1", true, null))), Map.of(), NOW);
    assertThat(removed.plan().toRelease()).containsExactly(Ip.parse("192.0.2.7"));
    assertThat(removed.plan().annotations().get("ns0")).isNotEqualTo("192.0.2.7");
  }

  @Test
  void aNodeThatNeverReportedReadyIsNotRememberedAsFailed() {
    NodeFacts registering = new NodeFacts("n3", Map.of("zone", "a"), null,
        new HealthObservation("n3", Instant.EPOCH, false), Set.of(), Set.of(), false, null);
    EgressDecision d = EgressPolicy.decide(inputs("x", namespaces(1), List.of(), List.of(registering, node("n1", true, null))),
        Map.of(), NOW);
    assertThat(d.verdicts().get("n3").failed()).isTrue(); // not eligible yet
    assertThat(d.failureHistory()).doesNotContainKey("n3"); // but once Ready, it is new, not recovering
    NodeFacts ready = new NodeFacts("n3", Map.of("zone", "a"), null, new HealthObservation("n3", NOW, true),
        Set.of(), Set.of(), false, null);
    EgressDecision next = EgressPolicy.decide(inputs("x", namespaces(1), List.of(), List.of(ready)),
        d.failureHistory(), NOW.plusSeconds(1));
    assertThat(next.verdicts().get("n3").eligible()).isTrue();
  }
}
