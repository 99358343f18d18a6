package org.ipamoperators.keepalived.reloader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
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

  @Test
  void theDaemonSetsArgumentsParse() {
    ReloaderOptions o = ReloaderOptions.parse(List.of("--source=/etc/keepalived/nodes/n1",
        "--target=/run/keepalived/config/keepalived.conf", "--pid-file=/run/keepalived/pid/keepalived.pid",
        "--interface-from-ip=192.0.2.1", "--interface-placeholder=ipam-from-ip", "--metrics-port=9650",
        "--interval=0.5"));
    assertThat(o.metricsPort()).isEqualTo(9650);
    assertThat(o.source()).isEqualTo(Path.of("/etc/keepalived/nodes/n1"));
    assertThat(o.pidFile()).hasValue(Path.of("/run/keepalived/pid/keepalived.pid"));
    assertThat(o.interfaceFromIp()).hasValue("192.0.2.1");
    assertThat(o.interval()).isEqualTo(Duration.ofMillis(500));
    assertThat(o.once()).isFalse();
    assertThatThrownBy(() -> ReloaderOptions.parse(List.of("--source=a", "--target=b", "--bogus")))
        .hasMessageContaining("--bogus");
    assertThatThrownBy(() -> ReloaderOptions.parse(List.of("--source=a"))).hasMessageContaining("--target");
  }
}
