package org.ipamoperators.vip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import java.util.List;
import java.util.Map;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.junit.jupiter.api.Test;

class NamespaceScopeTest {
  private static final LabelSelector TEAM_A = new LabelSelectorBuilder().withMatchLabels(Map.of("team", "a")).build();

  private static IPGroupSpec spec(List<String> namespaces, LabelSelector selector) {
    return new IPGroupSpec(null, null, List.of("192.0.2.0/28"), null, null, selector, null, null, namespaces);
  }

  @Test
  void namesAndSelectorMustBothHoldWhenBothAreSetEmptyOrAbsentAdmitsEveryone() {
    Map<String, String> teamA = Map.of("team", "a");
    assertThat(NamespaceScope.rejection(spec(null, null), "web", Map.of())).isNull();
    assertThat(NamespaceScope.rejection(spec(List.of(), null), "web", Map.of())).isNull();
    assertThat(NamespaceScope.rejection(spec(List.of("web"), null), "web", Map.of())).isNull();
    assertThat(NamespaceScope.rejection(spec(List.of("web"), null), "team-b", Map.of()))
        .isEqualTo("its namespaces do not include namespace team-b");
    assertThat(NamespaceScope.rejection(spec(List.of("web"), TEAM_A), "web", teamA)).isNull();
    assertThat(NamespaceScope.rejection(spec(List.of("web"), TEAM_A), "web", Map.of("team", "b")))
        .isEqualTo("its namespaceSelector does not match namespace web");
    assertThat(NamespaceScope.rejection(spec(List.of("web"), TEAM_A), "team-b", teamA))
        .as("labels alone do not admit a namespace the names leave out")
        .isEqualTo("its namespaces do not include namespace team-b");
  }

  /** The namespace GET is made only for a group whose names admit the Service's namespace. */
  @Test
  void theNamespacesLabelsAreNeededOnlyWhenASelectorRemainsToBeChecked() {
    assertThat(NamespaceScope.needsLabels(spec(null, null), "web")).isFalse();
    assertThat(NamespaceScope.needsLabels(spec(List.of("web"), null), "web")).isFalse();
    assertThat(NamespaceScope.needsLabels(spec(null, TEAM_A), "web")).isTrue();
    assertThat(NamespaceScope.needsLabels(spec(List.of("web"), TEAM_A), "web")).isTrue();
    assertThat(NamespaceScope.needsLabels(spec(List.of("web"), TEAM_A), "team-b")).isFalse();
  }

  @Test
  void aServiceOfANamespaceTheGroupDoesNotNameGetsNothingFromItAndIsToldWhy() {
    List<GroupInfo> groups = List.of(new GroupInfo("web-only", spec(List.of("web"), null)));
    ServiceRequest other = new ServiceRequest("team-b", "s", Map.of(), Map.of(), null, List.of(),
        List.of(IpFamily.IPV4), null);
    VipPlan p = VipPlanner.plan(other, groups, List.of(), Map.of());
    assertThat(p.toClaim()).isEmpty();
    assertThat(p.ingress()).isEmpty();
    assertThat(p.problems()).singleElement().satisfies(x -> {
      assertThat(x.reason()).isEqualTo(VipProblem.Reason.NoPool);
      assertThat(x.message()).contains("web-only: its namespaces do not include namespace team-b");
    });
    // Named explicitly, the same.
    ServiceRequest named = new ServiceRequest("team-b", "s", Map.of(), Map.of(), "web-only", List.of(),
        List.of(IpFamily.IPV4), null);
    assertThat(VipPlanner.plan(named, groups, List.of(), Map.of()).toClaim()).isEmpty();

    ServiceRequest own = new ServiceRequest("web", "s", Map.of(), Map.of(), null, List.of(), List.of(IpFamily.IPV4),
        null);
    assertThat(VipPlanner.plan(own, groups, List.of(), Map.of()).toClaim())
        .containsExactly(new Holding(Ip.parse("192.0.2.1"), "ipgroup/web-only"));
  }

  /** The restriction set after the Service got its address: kept (never taken away), and said. */
  @Test
  void anAddressHeldBeforeTheGroupLeftTheNamespaceOutIsKeptWithARemark() {
    List<GroupInfo> groups = List.of(new GroupInfo("web-only", spec(List.of("web"), null)));
    ServiceRequest other = new ServiceRequest("team-b", "s", Map.of(), Map.of(), null, List.of(),
        List.of(IpFamily.IPV4), null);
    VipPlan p = VipPlanner.plan(other, groups, List.of(new Holding(Ip.parse("192.0.2.3"), "ipgroup/web-only")),
        Map.of());
    assertThat(p.ingress()).containsExactly(Ip.parse("192.0.2.3"));
    assertThat(p.toRelease()).isEmpty();
    assertThat(p.complete()).isTrue();
    assertThat(p.problems()).singleElement().satisfies(x -> {
      assertThat(x.reason()).isEqualTo(VipProblem.Reason.AddressOutsidePool);
      assertThat(x.message()).contains("IPGroup web-only no longer serves this Service",
          "its namespaces do not include namespace team-b", "kept");
    });
    ServiceRequest own = new ServiceRequest("web", "s", Map.of(), Map.of(), null, List.of(), List.of(IpFamily.IPV4),
        null);
    assertThat(VipPlanner.plan(own, groups, List.of(new Holding(Ip.parse("192.0.2.3"), "ipgroup/web-only")),
        Map.of()).problems()).isEmpty();
  }
}
