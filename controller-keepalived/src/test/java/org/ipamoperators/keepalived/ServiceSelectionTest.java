package org.ipamoperators.keepalived;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.config.Problem;
import org.ipamoperators.keepalived.config.ServiceRef;
import org.ipamoperators.keepalived.config.ServiceVips;
import org.ipamoperators.keepalived.config.VipHandover;
import org.junit.jupiter.api.Test;

/** Which Services a group announces, and the Events and troubled keys for those it does not (fully). */
class ServiceSelectionTest {

  private static Service service(String namespace, String name, Map<String, String> annotations, String... ips) {
    return new ServiceBuilder().withNewMetadata().withNamespace(namespace).withName(name)
        .withAnnotations(annotations).endMetadata().withNewSpec().withType("LoadBalancer").withExternalIPs(ips)
        .endSpec().build();
  }

  @Test
  void aServiceOfANamespaceNotAllowedIsTroubledAndNotAttached() {
    ServiceSelection s = ServiceSelection.of("net/g", List.of(service("a", "web", Map.of(), "192.0.2.1"),
        service("b", "db", Map.of(), "192.0.2.2")), "a"::equals);
    assertThat(s.attached()).containsOnlyKeys(new ServiceRef("a", "web"));
    assertThat(s.keys()).containsExactly("a/web");
    assertThat(s.troubled()).containsExactly("b/db");
    assertThat(s.vips()).extracting(ServiceVips::service).containsExactly(new ServiceRef("a", "web"));
    assertThat(s.notes()).singleElement().satisfies(n -> {
      assertThat(n.warning()).isTrue();
      assertThat(n.reason()).isEqualTo("NamespaceNotAllowed");
      assertThat(n.on().getMetadata().getName()).isEqualTo("db");
      assertThat(n.message()).contains("KeepalivedGroup net/g");
    });
  }

  @Test
  void aServiceWithABadAnnotationIsAttachedAndTroubled() {
    ServiceSelection s = ServiceSelection.of("net/g", List.of(service("a", "web",
        Map.of(KeepalivedAnnotations.SPREAD_VIPS, "maybe"), "192.0.2.1")), ns -> true);
    assertThat(s.attached()).containsOnlyKeys(new ServiceRef("a", "web"));
    assertThat(s.troubled()).containsExactly("a/web");
    assertThat(s.notes()).singleElement().satisfies(n -> assertThat(n.reason()).isEqualTo("InvalidServiceConfig"));
  }

  @Test
  void aVipHeldByAnotherGroupWaitsWithAWarning() {
    ServiceSelection s = ServiceSelection.of("net/g", List.of(service("a", "web", Map.of(), "192.0.2.1",
        "192.0.2.2")), ns -> true);
    ServiceVips kept = ServiceVips.of("a/web", "192.0.2.2");
    ServiceSelection after = s.handedOver(new VipHandover.Decision(List.of(kept), List.of(
        new VipHandover.Deferred(new ServiceRef("a", "web"), Ip.parse("192.0.2.1"), "net/other"))));
    assertThat(after.vips()).containsExactly(kept);
    assertThat(after.troubled()).containsExactly("a/web");
    assertThat(after.notes()).singleElement().satisfies(n -> {
      assertThat(n.reason()).isEqualTo("VIPHeldByAnotherGroup");
      assertThat(n.message()).startsWith("192.0.2.1 is still announced by KeepalivedGroup net/other");
    });
    assertThat(s.troubled()).isEmpty();
  }

  @Test
  void aServiceWithoutAVipYetIsNotTroubledButOtherProblemsAre() {
    ServiceSelection s = ServiceSelection.of("net/g", List.of(service("a", "lb", Map.of()),
        service("a", "dup", Map.of(), "192.0.2.1")), ns -> true);
    ServiceSelection after = s.withProblems(List.of(
        new Problem(Problem.Kind.NO_VIP, new TreeSet<>(Set.of(new ServiceRef("a", "lb"))), "no VIP yet"),
        new Problem(Problem.Kind.DUPLICATE_VIP, new TreeSet<>(Set.of(new ServiceRef("a", "dup"))), "taken"),
        new Problem(Problem.Kind.DUPLICATE_VIP, new TreeSet<>(Set.of(new ServiceRef("a", "gone"))),
            "not attached")));
    assertThat(after.troubled()).containsExactly("a/dup");
    assertThat(after.notes()).extracting(GroupReport.Note::reason, GroupReport.Note::warning)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("NoVIPYet", false),
            org.assertj.core.groups.Tuple.tuple("DuplicateVIP", true));
  }

  @Test
  void aServiceOfANamespaceNotInServiceNamespacesIsRefused() {
    AttachRules rules = AttachRules.parse(List.of("@group"), List.of()).forGroup("net", null);
    ServiceSelection s = ServiceSelection.of("net/g", List.of(service("net", "web", Map.of(), "192.0.2.1"),
        service("team-b", "db", Map.of(), "192.0.2.2")), ns -> true, rules);
    assertThat(s.attached()).containsOnlyKeys(new ServiceRef("net", "web"));
    assertThat(s.troubled()).containsExactly("team-b/db");
    assertThat(s.refused()).containsExactly("team-b/db");
    assertThat(s.vips()).extracting(ServiceVips::service).containsExactly(new ServiceRef("net", "web"));
    assertThat(s.notes()).singleElement().satisfies(n -> {
      assertThat(n.warning()).isTrue();
      assertThat(n.reason()).isEqualTo(ServiceSelection.REASON_NAMESPACE);
      assertThat(n.on().getMetadata().getName()).isEqualTo("db");
      assertThat(n.message()).contains("namespace team-b", "KeepalivedGroup net/g", "serviceNamespaces: [net]");
    });
  }

  @Test
  void vipsOutsideTheCidrsAreLeftOutAndTheOthersStillAnnounced() {
    AttachRules rules = AttachRules.parse(List.of(), List.of("192.0.2.0/25", "2001:db8:a::/48"));
    ServiceSelection s = ServiceSelection.of("net/g", List.of(
        service("a", "mixed", Map.of(), "192.0.2.1", "192.0.2.200", "2001:db8:a::1", "2001:db8:b::1"),
        service("a", "outside", Map.of(), "198.51.100.1", "2001:db8:c::1"),
        service("a", "inside", Map.of(), "2001:db8:a:1::1")), ns -> true, rules);
    assertThat(s.vips()).containsExactlyInAnyOrder(ServiceVips.of("a/mixed", "192.0.2.1", "2001:db8:a::1"),
        ServiceVips.of("a/inside", "2001:db8:a:1::1"));
    // A Service none of whose VIPs may be announced is not attached at all.
    assertThat(s.attached()).containsOnlyKeys(new ServiceRef("a", "mixed"), new ServiceRef("a", "inside"));
    assertThat(s.keys()).containsExactly("a/inside", "a/mixed");
    assertThat(s.troubled()).containsExactly("a/mixed", "a/outside");
    assertThat(s.refused()).containsExactly("a/mixed", "a/outside");
    assertThat(s.notes()).extracting(GroupReport.Note::reason).containsOnly(ServiceSelection.REASON_VIP);
    assertThat(s.notes()).extracting(GroupReport.Note::message).containsExactly(
        "192.0.2.200, 2001:db8:b::1 are outside the addresses KeepalivedGroup net/g may announce (vipCIDRs:"
            + " [192.0.2.0/25, 2001:db8:a::/48]): not announced",
        "198.51.100.1, 2001:db8:c::1 are outside the addresses KeepalivedGroup net/g may announce (vipCIDRs:"
            + " [192.0.2.0/25, 2001:db8:a::/48]): not announced");
  }

  @Test
  void specialAddressesAreRefusedBeforeTheCidrsAreLookedAt() {
    AttachRules rules = AttachRules.parse(List.of(), List.of("0.0.0.0/0", "::/0"));
    ServiceSelection s = ServiceSelection.of("net/g", List.of(service("a", "web", Map.of(), "127.0.0.1",
        "192.0.2.1")), ns -> true, rules);
    assertThat(s.vips()).containsExactly(ServiceVips.of("a/web", "192.0.2.1"));
    assertThat(s.refused()).isEmpty();
    assertThat(s.troubled()).containsExactly("a/web");
    assertThat(s.notes()).singleElement().satisfies(n -> assertThat(n.reason()).isEqualTo("InvalidServiceConfig"));
  }

  @Test
  void refusalsSurviveTheLaterSteps() {
    AttachRules rules = AttachRules.parse(List.of("a"), List.of());
    ServiceSelection s = ServiceSelection.of("net/g", List.of(service("b", "x", Map.of(), "192.0.2.1")), ns -> true,
        rules);
    assertThat(s.handedOver(new VipHandover.Decision(List.of(), List.of())).withProblems(List.of()).refused())
        .containsExactly("b/x");
  }
}
