package org.ipamoperators.testsupport.keepalived;

import static org.assertj.core.api.Assertions.assertThat;

import org.ipamoperators.testsupport.netns.NetnsExtension;
import org.ipamoperators.testsupport.netns.NetworkLab;
import org.ipamoperators.testsupport.netns.NetworkNamespace;
import org.junit.jupiter.api.Test;

/** keepalived's own parser judges configurations, in a namespace that has the interfaces they name. */
class KeepalivedConfigCheckIT {

  private final Keepalived keepalived = Keepalived.locate();

  @Test
  void acceptsAValidConfigurationInANamespaceWithItsInterface() {
    NetnsExtension.requireNetworkNamespaces();
    try (NetworkLab lab = NetworkLab.create()) {
      NetworkNamespace node = nodeWithEth1(lab);

      ConfigCheck check = keepalived.checkConfig(vrrpConfig("eth1", 51, "192.0.2.100/24"), node);

      assertThat(check.valid()).as(check.output()).isTrue();
      assertThat(check.exitCode()).isZero();
    }
  }

  @Test
  void rejectsAnInterfaceTheNamespaceDoesNotHave() {
    NetnsExtension.requireNetworkNamespaces();
    try (NetworkLab lab = NetworkLab.create()) {
      NetworkNamespace node = nodeWithEth1(lab);

      ConfigCheck check = keepalived.checkConfig(vrrpConfig("eth7", 51, "192.0.2.100/24"), node);

      assertThat(check.valid()).isFalse();
      assertThat(check.messages()).anyMatch(line -> line.contains("eth7"));
    }
  }

  @Test
  void rejectsABrokenConfigurationWithTheOffendingLine() {
    String broken = vrrpConfig("eth1", 300, "192.0.2.100/24").replace("priority 100", "priority 100\n  bogus_keyword 1");

    ConfigCheck check = keepalived.checkConfig(broken);

    assertThat(check.valid()).isFalse();
    assertThat(check.exitCode()).isNotZero();
    assertThat(check.messages())
        .anyMatch(line -> line.contains("'300'"))
        .anyMatch(line -> line.contains("Unknown keyword 'bogus_keyword'"));
  }

  @Test
  void rejectsUnbalancedBraces() {
    String unbalanced = vrrpConfig("eth1", 51, "192.0.2.100/24");
    unbalanced = unbalanced.substring(0, unbalanced.lastIndexOf('}'));

    ConfigCheck check = keepalived.checkConfig(unbalanced);

    assertThat(check.valid()).isFalse();
    assertThat(check.messages()).anyMatch(line -> line.contains("missing '}'"));
  }

  @Test
  void aMissingIncludeIsAnError() {
    ConfigCheck check = keepalived.checkConfig("include /nonexistent/ipam-operators/missing.conf\n");

    assertThat(check.valid()).as("keepalived exits 0 here unless --all-config is given").isFalse();
  }

  private static NetworkNamespace nodeWithEth1(NetworkLab lab) {
    NetworkNamespace node = lab.namespace("node");
    NetworkNamespace peer = lab.namespace("peer");
    lab.veth(node, "eth1", peer, "eth1");
    node.addAddress("eth1", "192.0.2.11/24");
    return node;
  }

  static String vrrpConfig(String iface, int routerId, String vip) {
    return """
        global_defs {
          router_id ipam_test
          enable_script_security
        }
        vrrp_instance VI_%1$d {
          state BACKUP
          interface %2$s
          virtual_router_id %1$d
          priority 100
          advert_int 1
          nopreempt
          virtual_ipaddress {
            %3$s dev %2$s
          }
        }
        """.formatted(routerId, iface, vip);
  }
}
