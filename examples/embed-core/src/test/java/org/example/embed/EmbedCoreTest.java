package org.example.embed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.placement.Change;
import org.ipamoperators.core.plan.PlanResult;
import org.junit.jupiter.api.Test;

class EmbedCoreTest {
  @Test
  void poolsAllocationsAndAFailoverPlanAsExpected() {
    EmbedCore.Outcome o = EmbedCore.run();

    Map<String, Ip> first = o.before().allocations().stream()
        .collect(Collectors.toMap(a -> a.claimant() + "@" + a.pool(), PlanResult.Allocation::address));
    assertEquals(Map.of(
        "team-a/web@egress-a", first.get("team-a/web@egress-a"),
        "team-a/web@egress-b", Ip.parse("198.51.100.1"),
        "team-b/batch@egress-a", first.get("team-b/batch@egress-a")), first);
    assertTrue(o.before().clean(), "first plan: " + o.before());
    for (String k : List.of("team-a/web@egress-a", "team-b/batch@egress-a")) {
      Ip ip = first.get(k);
      assertTrue(ip.toString().startsWith("192.0.2."), k + " from 192.0.2.0/28: " + ip);
      assertFalse(ip.equals(Ip.parse("192.0.2.1")) || ip.equals(Ip.parse("192.0.2.0")), "reserved or network: " + ip);
    }
    // zone-a's two addresses are spread over its two nodes
    assertEquals(1, o.before().placement().assignments().get("a1").size());
    assertEquals(1, o.before().placement().assignments().get("a2").size());

    assertTrue(o.verdicts().get("a1").failed(), "a1 NotReady beyond the grace period");
    assertFalse(o.verdicts().get("a2").failed());

    // After the failover: the same addresses, kept by their owners, all of zone-a on a2.
    assertTrue(o.after().allocations().stream().allMatch(PlanResult.Allocation::kept));
    assertEquals(o.before().allocations().stream().map(PlanResult.Allocation::address).sorted().toList(),
        o.after().allocations().stream().map(PlanResult.Allocation::address).sorted().toList());
    assertTrue(o.after().placement().assignments().getOrDefault("a1", new java.util.TreeSet<>()).isEmpty());
    assertEquals(2, o.after().placement().assignments().get("a2").size());
    List<Change> moves = o.after().placement().changes(Change.Kind.MOVE);
    assertEquals(1, moves.size(), "changes: " + o.after().placement().changes());
    assertEquals("a1", moves.get(0).from());
    assertEquals("a2", moves.get(0).to());
  }
}
