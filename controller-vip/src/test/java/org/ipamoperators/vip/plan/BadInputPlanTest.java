package org.ipamoperators.vip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.junit.jupiter.api.Test;

/** The bad-input corpus's VIP findings, pure: huge annotations and huge invalid groups stay short in messages. */
class BadInputPlanTest {
  private static final GroupInfo GROUP = new GroupInfo("g", new IPGroupSpec("192.0.2.0/24", null, null, null, null,
      null, null, null));

  private static ServiceRequest svc(List<String> requested) {
    return new ServiceRequest("ns", "s", Map.of(), Map.of(), "g", requested, List.of(IpFamily.IPV4), null);
  }

  @Test
  void aHugeRequestMakesAFewShortProblemsAndClaimsNothing() {
    List<String> requested = new ArrayList<>(Collections.nCopies(7000, "192.0.2.45"));
    VipPlan p = VipPlanner.plan(svc(requested), List.of(GROUP), List.of(), Map.of());
    assertThat(p.problems()).hasSize(VipPlanner.PROBLEMS_SHOWN + 1)
        .allMatch(x -> x.reason() == VipProblem.Reason.InvalidRequest);
    assertThat(p.problems().get(VipPlanner.PROBLEMS_SHOWN).message()).startsWith("6994 more unusable entries");
    assertThat(p.toClaim()).isEmpty();
    assertThat(p.ingress()).isEmpty();
  }

  @Test
  void anUnusableRequestTakesNoAddressFromThePoolButKeepsWhatIsHeld() {
    VipPlan fresh = VipPlanner.plan(svc(List.of("not-an-ip")), List.of(GROUP), List.of(), Map.of());
    assertThat(fresh.problems()).isNotEmpty();
    assertThat(fresh.toClaim()).as("claimed but never published").isEmpty();
    Holding held = new Holding(Ip.parse("192.0.2.9"), "ipgroup/g");
    VipPlan kept = VipPlanner.plan(svc(List.of("192.0.2.10", "192.0.2.11")), List.of(GROUP), List.of(held), Map.of());
    assertThat(kept.toClaim()).isEmpty();
    assertThat(kept.toRelease()).isEmpty();
    assertThat(kept.ingress()).containsExactly(Ip.parse("192.0.2.9"));
  }

  @Test
  void aHugeUnparsableRequestIsQuotedShort() {
    VipPlan p = VipPlanner.plan(svc(List.of("x".repeat(100_000))), List.of(GROUP), List.of(), Map.of());
    assertThat(p.problems()).hasSize(1);
    assertThat(p.problems().get(0).message()).contains("(100000 characters)").hasSizeLessThan(300);
  }

  @Test
  void aGroupWithHundredsOfProblemsIsSummarized() {
    GroupInfo bad = new GroupInfo("bad", new IPGroupSpec("203.0.113.128/26",
        Collections.nCopies(1000, "203.0.113.1"), null, null, null, null, null, null));
    VipPlan p = VipPlanner.plan(svc(List.of()), List.of(bad), List.of(), Map.of());
    assertThat(p.problems()).isNotEmpty().allSatisfy(x -> assertThat(x.message()).hasSizeLessThan(3000));
  }
}
