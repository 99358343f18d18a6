package org.ipamoperators.vip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import java.util.List;
import java.util.Map;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.junit.jupiter.api.Test;

/** The planner alone: pool choice, requested addresses, dual-stack and the reasons, without an API server. */
class VipPlannerTest {
  private static final List<IpFamily> V4 = List.of(IpFamily.IPV4);

  private static GroupInfo group(String name, String segment, List<String> excluded) {
    return new GroupInfo(name, new IPGroupSpec(segment, excluded, null, null, null, null, null, null));
  }

  private static GroupInfo group(String name, List<String> cidrs, Boolean autoAssign, Map<String, String> serviceLabels,
      Map<String, String> nsLabels, Integer priority) {
    return new GroupInfo(name, new IPGroupSpec(null, null, cidrs, autoAssign,
        serviceLabels == null ? null : new LabelSelectorBuilder().withMatchLabels(serviceLabels).build(),
        nsLabels == null ? null : new LabelSelectorBuilder().withMatchLabels(nsLabels).build(), priority, null));
  }

  private static ServiceRequest svc(String name, String ipGroup, List<String> requested, List<IpFamily> families) {
    return new ServiceRequest("ns", name, Map.of("app", name), Map.of("team", "a"), ipGroup, requested, families, null);
  }

  private static Map<Ip, String> taken(String... ips) {
    Map<Ip, String> m = new java.util.HashMap<>();
    for (String ip : ips) {
      m.put(Ip.parse(ip), "Service ns/other (vip)");
    }
    return m;
  }

  @Test
  void theReferencesFirstScenarioGivesTheLowestFreeAddressSkippingExcluded() {
    GroupInfo p1 = group("p1", "1.1.1.0/29", List.of("1.1.1.0", "1.1.1.2", "1.1.1.7"));
    VipPlan a = VipPlanner.plan(svc("a", null, List.of(), V4), List.of(p1), List.of(), Map.of());
    assertThat(a.ingress()).containsExactly(Ip.parse("1.1.1.1"));
    assertThat(a.toClaim()).containsExactly(new Holding(Ip.parse("1.1.1.1"), "ipgroup/p1"));
    VipPlan b = VipPlanner.plan(svc("b", null, List.of(), V4), List.of(p1), List.of(), taken("1.1.1.1"));
    assertThat(b.ingress()).containsExactly(Ip.parse("1.1.1.3"));
  }

  @Test
  void aServiceThatCannotHaveEveryFamilyClaimsNoneOfThem() {
    GroupInfo ds = group("ds", List.of("192.0.2.0/29", "2001:db8:1::/126"), null, null, null, null);
    VipPlan p = VipPlanner.plan(svc("a", null, List.of(), List.of(IpFamily.IPV4, IpFamily.IPV6)), List.of(ds),
        List.of(), taken("2001:db8:1::1", "2001:db8:1::2", "2001:db8:1::3"));
    assertThat(p.problems()).extracting(VipProblem::reason).contains(VipProblem.Reason.PoolExhausted);
    assertThat(p.toClaim()).as("no free IPv4 address claimed while IPv6 is exhausted").isEmpty();
    assertThat(p.ingress()).isEmpty();
  }

  @Test
  void aChangedRequestMovesToTheNewAddressAndReleasesTheOldOneOnlyAfterwards() {
    GroupInfo p1 = group("p1", "192.0.2.0/24", null);
    Holding old = new Holding(Ip.parse("192.0.2.9"), "ipgroup/p1");
    VipPlan p = VipPlanner.plan(svc("a", null, List.of("192.0.2.50"), V4), List.of(p1), List.of(old), Map.of());
    assertThat(p.toClaim()).containsExactly(new Holding(Ip.parse("192.0.2.50"), "ipgroup/p1"));
    assertThat(p.ingress()).containsExactly(Ip.parse("192.0.2.50"));
    assertThat(p.toRelease()).containsExactly(old);
    assertThat(p.problems()).isEmpty();
  }

  @Test
  void aChangedRequestThatCannotBeHadKeepsTheHeldAddress() {
    GroupInfo p1 = group("p1", "192.0.2.0/24", null);
    VipPlan p = VipPlanner.plan(svc("a", null, List.of("192.0.2.50"), V4), List.of(p1),
        List.of(new Holding(Ip.parse("192.0.2.9"), "ipgroup/p1")), taken("192.0.2.50"));
    assertThat(p.toClaim()).isEmpty();
    assertThat(p.toRelease()).isEmpty();
    assertThat(p.ingress()).containsExactly(Ip.parse("192.0.2.9"));
    assertThat(p.complete()).isTrue();
    assertThat(p.problems()).singleElement().satisfies(x -> {
      assertThat(x.reason()).isEqualTo(VipProblem.Reason.AddressKept);
      assertThat(x.message()).contains("held by Service ns/other").contains("keeps 192.0.2.9");
    });
  }

  @Test
  void anAddressTheEditedGroupNoLongerOffersIsKeptAndReported() {
    GroupInfo p1 = group("p1", "192.0.2.0/24", List.of("192.0.2.9"));
    VipPlan p = VipPlanner.plan(svc("a", null, List.of(), V4), List.of(p1),
        List.of(new Holding(Ip.parse("192.0.2.9"), "ipgroup/p1")), Map.of());
    assertThat(p.ingress()).containsExactly(Ip.parse("192.0.2.9"));
    assertThat(p.toClaim()).isEmpty();
    assertThat(p.complete()).isTrue();
    assertThat(p.problems()).singleElement().satisfies(x -> {
      assertThat(x.reason()).isEqualTo(VipProblem.Reason.AddressOutsidePool);
      assertThat(x.message()).contains("reserved");
    });
    GroupInfo shrunk = group("p1", "192.0.2.128/25", null);
    VipPlan q = VipPlanner.plan(svc("a", null, List.of(), V4), List.of(shrunk),
        List.of(new Holding(Ip.parse("192.0.2.9"), "ipgroup/p1")), Map.of());
    assertThat(q.ingress()).containsExactly(Ip.parse("192.0.2.9"));
    assertThat(q.problems()).singleElement().satisfies(x -> assertThat(x.message()).contains("outside"));
  }

  private static ServiceRequest sharing(String name, String key, List<String> requested, List<String> ports, String backend) {
    return new ServiceRequest("ns", name, Map.of(), Map.of(), null, requested, V4, null, List.of(), key,
        new ShareMember("ns/" + name, null, ports, backend));
  }

  @Test
  void aServiceJoinsItsKeysAddressWhenPortsDoNotClash() {
    GroupInfo p1 = group("p1", "192.0.2.0/24", null);
    Map<Ip, SharedAddress> key = Map.of(Ip.parse("192.0.2.1"), new SharedAddress("ipgroup/p1", "k",
        List.of(new ShareMember("ns/a", null, List.of("TCP/80"), ""))));
    VipPlan b = VipPlanner.plan(sharing("b", "k", List.of(), List.of("TCP/443", "UDP/80"), ""), List.of(p1), List.of(),
        Map.of(), key);
    assertThat(b.toClaim()).containsExactly(new Holding(Ip.parse("192.0.2.1"), "ipgroup/p1"));
    VipPlan c = VipPlanner.plan(sharing("c", "k", List.of(), List.of("TCP/80"), ""), List.of(p1), List.of(), Map.of(), key);
    assertThat(c.toClaim()).isEmpty();
    assertThat(c.complete()).isFalse();
    assertThat(c.problems()).singleElement().satisfies(x -> {
      assertThat(x.reason()).isEqualTo(VipProblem.Reason.PortClash);
      assertThat(x.message()).contains("TCP/80 already used by ns/a");
    });
    VipPlan local = VipPlanner.plan(sharing("d", "k", List.of("192.0.2.1"), List.of("TCP/8080"), "app=d"), List.of(p1),
        List.of(), Map.of(), key);
    assertThat(local.problems()).singleElement().satisfies(x -> assertThat(x.message()).contains("externalTrafficPolicy"));
    // The same key with a fresh address when the key has none yet; another key's address is taken.
    VipPlan fresh = VipPlanner.plan(sharing("e", "other", List.of(), List.of("TCP/80"), ""), List.of(p1), List.of(),
        taken("192.0.2.1"), Map.of());
    assertThat(fresh.toClaim()).containsExactly(new Holding(Ip.parse("192.0.2.2"), "ipgroup/p1"));
  }

  @Test
  void requestedAddressesAreHonouredOrExplained() {
    List<GroupInfo> groups = List.of(group("p1", "192.0.2.0/24", List.of("192.0.2.7")));
    assertThat(VipPlanner.plan(svc("a", null, List.of("192.0.2.44"), V4), groups, List.of(), Map.of()).ingress())
        .containsExactly(Ip.parse("192.0.2.44"));
    VipPlan held = VipPlanner.plan(svc("a", null, List.of("192.0.2.44"), V4), groups, List.of(), taken("192.0.2.44"));
    assertThat(held.problems()).singleElement().satisfies(x -> {
      assertThat(x.reason()).isEqualTo(VipProblem.Reason.AddressUnavailable);
      assertThat(x.message()).contains("held by Service ns/other (vip)");
    });
    assertThat(VipPlanner.plan(svc("a", null, List.of("9.9.9.9"), V4), groups, List.of(), Map.of()).problems())
        .singleElement().satisfies(x -> assertThat(x.message()).contains("no IPGroup contains 9.9.9.9"));
    assertThat(VipPlanner.plan(svc("a", null, List.of("192.0.2.7"), V4), groups, List.of(), Map.of()).problems())
        .singleElement().satisfies(x -> assertThat(x.message()).contains("reserved in pool 'p1'"));
    assertThat(VipPlanner.plan(svc("a", null, List.of("1.1.2"), V4), groups, List.of(), Map.of()).problems())
        .anySatisfy(x -> assertThat(x.reason()).isEqualTo(VipProblem.Reason.InvalidRequest));
  }

  @Test
  void aZeroPaddedRequestIsRefusedNotReadAsOctal() {
    // The old guard let 192.0.2.044 through, and the parser read it as 192.0.2.36.
    List<GroupInfo> groups = List.of(group("p1", "192.0.2.0/24", List.of()));
    VipPlan p = VipPlanner.plan(svc("a", null, List.of("192.0.2.044"), V4), groups, List.of(), Map.of());
    assertThat(p.problems()).anySatisfy(x -> {
      assertThat(x.reason()).isEqualTo(VipProblem.Reason.InvalidRequest);
      assertThat(x.message()).contains("did you mean 192.0.2.44?");
    });
    assertThat(p.ingress()).doesNotContain(Ip.parse("192.0.2.36"));
  }

  @Test
  void theHighestPriorityMatchingAutoAssignPoolWinsAndEachRejectionIsExplained() {
    List<GroupInfo> groups = List.of(
        group("gold", List.of("192.0.2.0/28"), true, Map.of("tier", "gold"), null, 100),
        group("manual", List.of("198.51.100.0/28"), false, null, null, 50),
        group("other-team", List.of("203.0.113.0/28"), true, null, Map.of("team", "b"), 40),
        group("silver", List.of("203.0.113.16/28"), true, null, null, 10));
    VipPlan p = VipPlanner.plan(svc("a", null, List.of(), V4), groups, List.of(), Map.of());
    assertThat(p.toClaim()).containsExactly(new Holding(Ip.parse("203.0.113.17"), "ipgroup/silver"));

    VipPlan explicit = VipPlanner.plan(svc("a", "manual", List.of(), V4), groups, List.of(), Map.of());
    assertThat(explicit.ingress()).containsExactly(Ip.parse("198.51.100.1"));

    VipPlan none = VipPlanner.plan(svc("a", null, List.of(), V4), groups.subList(0, 3), List.of(), Map.of());
    assertThat(none.problems()).singleElement().satisfies(x -> {
      assertThat(x.reason()).isEqualTo(VipProblem.Reason.NoPool);
      assertThat(x.message()).contains("gold: its serviceSelector does not match")
          .contains("manual: autoAssign is false").contains("other-team: its namespaceSelector does not match namespace ns");
    });
    assertThat(VipPlanner.plan(svc("a", "nope", List.of(), V4), groups, List.of(), Map.of()).problems())
        .singleElement().satisfies(x -> assertThat(x.message()).isEqualTo("IPGroup nope does not exist"));
  }

  @Test
  void anExhaustedPoolFallsBackToTheNextAndIsReportedWhenAllAre() {
    List<GroupInfo> groups = List.of(group("small", List.of("192.0.2.1/32"), true, null, null, 10),
        group("next", List.of("192.0.2.8/31"), true, null, null, 0));
    VipPlan p = VipPlanner.plan(svc("a", null, List.of(), V4), groups, List.of(), taken("192.0.2.1"));
    assertThat(p.toClaim()).containsExactly(new Holding(Ip.parse("192.0.2.8"), "ipgroup/next"));
    VipPlan full = VipPlanner.plan(svc("a", null, List.of(), V4), groups, List.of(),
        taken("192.0.2.1", "192.0.2.8", "192.0.2.9"));
    assertThat(full.complete()).isFalse();
    assertThat(full.problems()).singleElement().satisfies(x -> {
      assertThat(x.reason()).isEqualTo(VipProblem.Reason.PoolExhausted);
      assertThat(x.message()).contains("small: no free IPv4 address").contains("next: no free IPv4 address");
    });
  }

  @Test
  void dualStackGetsOneAddressPerFamilyAndPreferDualStackIsQuietWithoutIpv6Pools() {
    List<GroupInfo> groups = List.of(group("ds", List.of("192.0.2.0/30", "2001:db8::/64"), null, null, null, null));
    VipPlan p = VipPlanner.plan(svc("a", null, List.of(), List.of(IpFamily.IPV6, IpFamily.IPV4)), groups, List.of(), Map.of());
    assertThat(p.ingress()).containsExactly(Ip.parse("2001:db8::1"), Ip.parse("192.0.2.1")); // :: is anycast
    ServiceRequest prefer = new ServiceRequest("ns", "b", null, null, null, null, V4, List.of(IpFamily.IPV6));
    assertThat(VipPlanner.plan(prefer, groups, List.of(), Map.of()).ingress()).hasSize(2);
    VipPlan v4only = VipPlanner.plan(prefer, List.of(group("v4", "192.0.2.0/30", null)), List.of(), Map.of());
    assertThat(v4only.ingress()).containsExactly(Ip.parse("192.0.2.1"));
    assertThat(v4only.problems()).isEmpty();
  }

  @Test
  void anInvalidPoolIsSkippedWithItsReasonAndDoesNotBlockOthers() {
    List<GroupInfo> groups = List.of(group("bad", List.of("10.0.0.5/24"), null, null, null, 99),
        group("good", List.of("192.0.2.0/30"), null, null, null, 0));
    VipPlan p = VipPlanner.plan(svc("a", null, List.of(), V4), groups, List.of(), Map.of());
    assertThat(p.ingress()).containsExactly(Ip.parse("192.0.2.1"));
    VipPlan only = VipPlanner.plan(svc("a", "bad", List.of(), V4), groups, List.of(), Map.of());
    assertThat(only.problems()).singleElement().satisfies(x -> assertThat(x.message()).contains("bad: invalid ("));
  }

  @Test
  void claimsOfAFamilyNoLongerWantedAreReleased() {
    List<GroupInfo> groups = List.of(group("ds", List.of("192.0.2.0/30", "2001:db8::/64"), null, null, null, null));
    Holding v6 = new Holding(Ip.parse("2001:db8::5"), "ipgroup/ds");
    Holding v4 = new Holding(Ip.parse("192.0.2.2"), "ipgroup/ds");
    VipPlan p = VipPlanner.plan(svc("a", null, List.of(), V4), groups, List.of(v6, v4), Map.of());
    assertThat(p.toRelease()).containsExactly(v6);
    assertThat(p.ingress()).containsExactly(Ip.parse("192.0.2.2"));
  }

  @Test
  void anAddressInTheStatusWhoseClaimWentMissingIsTakenBackUnlessSomeoneElseHoldsIt() {
    List<GroupInfo> groups = List.of(group("p1", "192.0.2.0/24", null));
    ServiceRequest req = new ServiceRequest("ns", "a", null, null, null, null, V4, null, List.of("192.0.2.77"), null, null);
    assertThat(VipPlanner.plan(req, groups, List.of(), Map.of()).toClaim())
        .containsExactly(new Holding(Ip.parse("192.0.2.77"), "ipgroup/p1"));
    VipPlan taken = VipPlanner.plan(req, groups, List.of(), taken("192.0.2.77"));
    assertThat(taken.ingress()).containsExactly(Ip.parse("192.0.2.1"));
    assertThat(taken.problems()).isEmpty();
    ServiceRequest outside = new ServiceRequest("ns", "a", null, null, null, null, V4, null, List.of("203.0.113.5"), null, null);
    assertThat(VipPlanner.plan(outside, groups, List.of(), Map.of()).ingress()).containsExactly(Ip.parse("192.0.2.1"));
  }
}
