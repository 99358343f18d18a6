package org.ipamoperators.keepalived.reloader;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class InterfaceSubstitutionTest {
  @Test
  void onlyTheInterfaceLinesOfThePlaceholderAreReplaced() {
    String config = """
        vrrp_instance a {
            interface ipam-from-ip
            track_interface {
                ipam-from-ip
            }
            interface ipam-from-ipx
        }
        """;
    assertThat(InterfaceSubstitution.apply(config, "ipam-from-ip", "ens3")).isEqualTo("""
        vrrp_instance a {
            interface ens3
            track_interface {
                ipam-from-ip
            }
            interface ipam-from-ipx
        }
        """);
  }

  @Test
  void theDeviceIsReadFromIpRouteGet() {
    assertThat(InterfaceSubstitution.deviceOf("192.0.2.7 dev eth1 src 192.0.2.1 uid 0 \\    cache"))
        .hasValue("eth1");
    assertThat(InterfaceSubstitution.deviceOf("RTNETLINK answers: Network is unreachable")).isEmpty();
  }
}
