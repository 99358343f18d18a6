package org.ipamoperators.vip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.junit.jupiter.api.Test;

/**
 * The planner with the ledger view of controller-vip ({@link ServiceHoldings}, {@link Taken}): the
 * view is live, so a claim can appear in it between the holdings and the plan (the informer's
 * initial list arriving while the first Services are planned).
 */
class LedgerViewTest {
  private static final GroupInfo G = new GroupInfo("g", new IPGroupSpec("192.0.2.0/28", List.of(), null, null, null,
      null, null, null));
  private static final ClaimOwner ONE = new ClaimOwner("vip", "Service", "ns", "one", "u1");

  private static ServiceRequest one(List<String> current) {
    return new ServiceRequest("ns", "one", Map.of(), Map.of(), null, List.of(), List.of(IpFamily.IPV4), List.of(),
        current, null, null);
  }

  @Test
  void aServicesOwnClaimThatTheViewShowsLateIsNotTakenFromIt() {
    Map<Ip, LedgerEntry> ledger = new HashMap<>();
    ServiceHoldings h = ServiceHoldings.of(one(List.of("192.0.2.5")), ONE, null, List.of()); // seen nothing yet
    Ip five = Ip.parse("192.0.2.5");
    ledger.put(five, new LedgerEntry(five, "ipgroup/g", ONE, List.of(), false)); // arrives now
    Taken taken = new Taken(ip -> Optional.ofNullable(ledger.get(ip)), ledger::values, h.own(),
        e -> ONE.sameAs(e.owner()), Map.of());
    VipPlan p = VipPlanner.plan(one(List.of("192.0.2.5")), List.of(G), h, taken);
    assertThat(p.ingress()).containsExactly(five); // before: 192.0.2.1, and the Service moved
    assertThat(taken.containsKey(five)).isFalse();
  }

  @Test
  void everyoneElsesClaimsAndReservationsAreTakenAndProbedPast() {
    Map<Ip, LedgerEntry> ledger = new HashMap<>();
    ClaimOwner other = new ClaimOwner("vip", "Service", "ns", "other", "u2");
    for (String ip : List.of("192.0.2.1", "192.0.2.2")) {
      ledger.put(Ip.parse(ip), new LedgerEntry(Ip.parse(ip), "ipgroup/g", other, List.of(), false));
    }
    ledger.put(Ip.parse("192.0.2.3"), new LedgerEntry(Ip.parse("192.0.2.3"), "ipgroup/g", other, List.of(), true));
    ServiceHoldings h = ServiceHoldings.of(one(List.of()), ONE, null, List.of());
    Taken taken = new Taken(ip -> Optional.ofNullable(ledger.get(ip)), ledger::values, h.own(),
        e -> ONE.sameAs(e.owner()), Map.of(Ip.parse("192.0.2.4"), "lost to someone"));
    VipPlan p = VipPlanner.plan(one(List.of()), List.of(G), h, taken);
    assertThat(p.ingress()).containsExactly(Ip.parse("192.0.2.5"));
    assertThat(taken.get(Ip.parse("192.0.2.3"))).contains("being claimed");
    assertThat(taken.keySet()).containsExactlyInAnyOrder(Ip.parse("192.0.2.1"), Ip.parse("192.0.2.2"),
        Ip.parse("192.0.2.3"), Ip.parse("192.0.2.4"));
  }

  @Test
  void holdingsClassifyOwnSharedAndJoinableClaims() {
    ClaimOwner key = new ClaimOwner("vip", LedgerEntry.SHARING_KIND, null, "k", null);
    ServiceRequest req = new ServiceRequest("ns", "one", Map.of(), Map.of(), null, List.of(), List.of(IpFamily.IPV4),
        List.of(), List.of(), "k", null);
    ShareMember me = new ShareMember("ns/one", null, List.of(), "");
    ShareMember b = new ShareMember("ns/b", null, List.of("TCP/443"), "");
    Ip a1 = Ip.parse("192.0.2.1");
    Ip a2 = Ip.parse("192.0.2.2");
    Ip a3 = Ip.parse("192.0.2.3");
    ServiceHoldings h = ServiceHoldings.of(req, ONE, key, List.of(
        new LedgerEntry(a1, "ipgroup/g", key, List.of(me, b), false),
        new LedgerEntry(a2, "ipgroup/g", key, List.of(b), false),
        new LedgerEntry(a3, "ipgroup/g", ONE, List.of(), true))); // only reserved: not held
    assertThat(h.held()).containsExactly(new Holding(a1, "ipgroup/g"));
    assertThat(h.heldUnder()).isEqualTo(Map.of(a1, "k"));
    assertThat(h.joinable()).containsOnlyKeys(a2);
    assertThat(h.own()).isEqualTo(Set.of(a1, a2));
  }
}
