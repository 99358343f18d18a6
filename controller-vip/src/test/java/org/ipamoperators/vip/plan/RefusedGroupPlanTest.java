package org.ipamoperators.vip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.junit.jupiter.api.Test;

/** A group refused for overlapping an older one: nothing new from it, nothing taken away. */
class RefusedGroupPlanTest {
  private static final List<IpFamily> V4 = List.of(IpFamily.IPV4);
  private static final GroupInfo OLD = new GroupInfo("old", spec("192.0.2.0/27", null));
  private static final GroupInfo YOUNG = new GroupInfo("young", spec("192.0.2.0/28", 10),
      "192.0.2.0/28 overlaps IPGroup 'old' (192.0.2.0/27)");

  private static IPGroupSpec spec(String segment, Integer priority) {
    return new IPGroupSpec(segment, null, null, null, null, null, priority, null);
  }

  private static ServiceRequest svc(String name, String ipGroup, List<String> requested) {
    return new ServiceRequest("ns", name, Map.of("app", name), Map.of(), ipGroup, requested, V4, null);
  }

  @Test
  void aRefusedGroupIsPassedOverEvenWithAHigherPriority() {
    VipPlan p = VipPlanner.plan(svc("a", null, List.of()), List.of(YOUNG, OLD), List.of(), Map.of());
    assertThat(p.toClaim()).containsExactly(new Holding(Ip.parse("192.0.2.1"), "ipgroup/old"));
    assertThat(p.problems()).isEmpty();
  }

  @Test
  void aServiceNamingTheRefusedGroupWaitsAndIsToldWhy() {
    VipPlan p = VipPlanner.plan(svc("a", "young", List.of()), List.of(YOUNG, OLD), List.of(), Map.of());
    assertThat(p.toClaim()).isEmpty();
    assertThat(p.problems()).singleElement().satisfies(x -> {
      assertThat(x.reason()).isEqualTo(VipProblem.Reason.NoPool);
      assertThat(x.message()).contains("young: refused").contains("192.0.2.0/28 overlaps IPGroup 'old' (192.0.2.0/27)");
    });
  }

  @Test
  void aRequestedAddressInTheOverlapComesFromTheServingGroup() {
    VipPlan p = VipPlanner.plan(svc("a", null, List.of("192.0.2.5")), List.of(YOUNG, OLD), List.of(), Map.of());
    assertThat(p.toClaim()).containsExactly(new Holding(Ip.parse("192.0.2.5"), "ipgroup/old"));
  }

  @Test
  void anAddressAlreadyGivenFromTheRefusedGroupStaysQuietly() {
    Holding held = new Holding(Ip.parse("192.0.2.3"), "ipgroup/young");
    VipPlan p = VipPlanner.plan(svc("a", null, List.of()), List.of(YOUNG, OLD), List.of(held), Map.of());
    assertThat(p.keep()).containsExactly(held);
    assertThat(p.toClaim()).isEmpty();
    assertThat(p.toRelease()).isEmpty();
    assertThat(p.ingress()).containsExactly(Ip.parse("192.0.2.3"));
    assertThat(p.problems()).as("the group reports the overlap, not every Service").isEmpty();
  }
}
