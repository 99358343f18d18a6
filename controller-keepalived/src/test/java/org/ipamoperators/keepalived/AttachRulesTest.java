package org.ipamoperators.keepalived;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.junit.jupiter.api.Test;

/** A group's own serviceNamespaces and vipCIDRs, or the operator's defaults; both families. */
class AttachRulesTest {

  private static KeepalivedGroupSpec spec(List<String> namespaces, List<String> cidrs) {
    return new KeepalivedGroupSpec(null, "eth0", null, null, null, null, null, null, null, null, null, null, null,
        null, null, null, null, null, null, null, namespaces, cidrs);
  }

  @Test
  void theDefaultAllowsEveryNamespaceAndAddress() {
    AttachRules r = AttachRules.ANY.forGroup("net", spec(null, null));
    assertThat(r.namespaceAllowed("anything")).isTrue();
    assertThat(r.announces(Ip.parse("198.51.100.7"))).isTrue();
    assertThat(r.announces(Ip.parse("2001:db8::7"))).isTrue();
  }

  @Test
  void aGroupWithoutFieldsGetsTheOperatorsDefaultWithItsOwnNamespace() {
    AttachRules defaults = AttachRules.parse(List.of("@group", "shared"), List.of("192.0.2.0/24", "2001:db8:1::/64"));
    AttachRules r = defaults.forGroup("team-a", spec(null, null));
    assertThat(r.namespaces()).containsExactlyInAnyOrder("team-a", "shared");
    assertThat(r.namespaceAllowed("team-b")).isFalse();
    assertThat(r.announces(Ip.parse("192.0.2.255"))).isTrue();
    assertThat(r.announces(Ip.parse("192.0.3.0"))).isFalse();
    assertThat(r.announces(Ip.parse("2001:db8:1::ffff"))).isTrue();
    assertThat(r.announces(Ip.parse("2001:db8:2::1"))).isFalse();
    // An IPv4 range never admits an IPv6 address of the same bits, nor the reverse.
    assertThat(r.announces(Ip.parse("::ffff:192.0.2.1"))).isFalse();
  }

  @Test
  void aGroupsOwnFieldsReplaceTheDefaultEachOnItsOwn() {
    AttachRules defaults = AttachRules.parse(List.of("@group"), List.of("192.0.2.0/24"));
    AttachRules ns = defaults.forGroup("team-a", spec(List.of("team-b"), null));
    assertThat(ns.namespaces()).containsExactly("team-b");
    assertThat(ns.announces(Ip.parse("198.51.100.1"))).isFalse();
    AttachRules cidrs = defaults.forGroup("team-a", spec(null, List.of("198.51.100.10-198.51.100.20", "2001:db8::5")));
    assertThat(cidrs.namespaces()).containsExactly("team-a");
    assertThat(cidrs.announces(Ip.parse("198.51.100.20"))).isTrue();
    assertThat(cidrs.announces(Ip.parse("198.51.100.21"))).isFalse();
    assertThat(cidrs.announces(Ip.parse("192.0.2.1"))).isFalse();
    assertThat(cidrs.announces(Ip.parse("2001:db8::5"))).isTrue();
    assertThat(cidrs.announces(Ip.parse("2001:db8::6"))).isFalse();
  }

  @Test
  void anEmptyListCountsAsUnsetNeverAsEverything() {
    AttachRules defaults = AttachRules.parse(List.of("@group"), List.of("192.0.2.0/24"));
    AttachRules r = defaults.forGroup("team-a", spec(List.of(), List.of()));
    assertThat(r.namespaces()).containsExactly("team-a");
    assertThat(r.announces(Ip.parse("198.51.100.1"))).isFalse();
  }

  @Test
  void badEntriesAreRefusedNamingTheFieldAndTheValue() {
    assertThatThrownBy(() -> AttachRules.ANY.forGroup("a", spec(null, List.of("192.0.2.1/24"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("vipCIDRs: ").hasMessageContaining("did you mean 192.0.2.0/24");
    assertThatThrownBy(() -> AttachRules.ANY.forGroup("a", spec(null, List.of("2001:db8::/129"))))
        .hasMessageStartingWith("vipCIDRs: ");
    assertThatThrownBy(() -> AttachRules.ANY.forGroup("a", spec(List.of("Team_A"), null)))
        .hasMessageStartingWith("serviceNamespaces: 'Team_A' is not a namespace name");
    assertThatThrownBy(() -> AttachRules.parse(List.of(), List.of("not-an-address")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not-an-address");
  }

  @Test
  void theFieldsReadFromYamlAndOldObjectsWithoutThemStillRead() {
    KeepalivedGroupSpec own = Serialization.unmarshal("""
        interface: eth0
        serviceNamespaces: [team-a, "@group"]
        vipCIDRs: [192.0.2.0/24, "2001:db8::/64"]
        """, KeepalivedGroupSpec.class);
    assertThat(own.serviceNamespaces()).containsExactly("team-a", "@group");
    assertThat(own.vipCIDRs()).containsExactly("192.0.2.0/24", "2001:db8::/64");
    KeepalivedGroupSpec old = Serialization.unmarshal("interface: eth0\nrouterIDSpace: lab\n",
        KeepalivedGroupSpec.class);
    assertThat(old.serviceNamespaces()).isNull();
    assertThat(old.vipCIDRs()).isNull();
    assertThat(old.routerIDSpace()).isEqualTo("lab");
    assertThat(Serialization.asYaml(old)).doesNotContain("serviceNamespaces").doesNotContain("vipCIDRs");
  }
}
