package org.ipamoperators.keepalived.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.Test;

class VipHandoverTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final VipHandover.Holder A = new VipHandover.Holder("ns/a", T0);
  private static final VipHandover.Holder B = new VipHandover.Holder("ns/b", T0.plusSeconds(60));

  @Test
  void aVipAnotherGroupStillRendersWaitsAndTheServicesOtherVipsAreRendered() {
    ServiceVips s = ServiceVips.of("app/s", "192.0.2.1", "2001:db8::1");
    VipHandover.Decision d = VipHandover.decide(List.of(s), Map.of(Ip.parse("192.0.2.1"), A), B, Set.of());
    assertThat(d.deferred()).containsExactly(new VipHandover.Deferred(s.service(), Ip.parse("192.0.2.1"), "ns/a"));
    assertThat(d.vips()).singleElement().satisfies(v -> assertThat(v.vips()).containsExactly(Ip.parse("2001:db8::1")));
  }

  @Test
  void aServiceWhoseEveryVipWaitsIsNotRenderedAtAll() {
    ServiceVips s = ServiceVips.of("app/s", "192.0.2.1");
    VipHandover.Decision d = VipHandover.decide(List.of(s), Map.of(Ip.parse("192.0.2.1"), A), B, Set.of());
    assertThat(d.vips()).isEmpty();
    assertThat(d.deferred()).hasSize(1);
  }

  @Test
  void nothingElsewhereChangesNothing() {
    List<ServiceVips> wanted = List.of(ServiceVips.of("app/s", "192.0.2.1"), ServiceVips.of("app/t", "192.0.2.2"));
    VipHandover.Decision d = VipHandover.decide(wanted, Map.of(Ip.parse("192.0.2.9"), A), B, Set.of());
    assertThat(d.vips()).isEqualTo(wanted);
    assertThat(d.deferred()).isEmpty();
  }

  @Test
  void whenBothRenderItTheOlderKeepsItAndTheYoungerLetsGo() {
    ServiceVips s = ServiceVips.of("app/s", "192.0.2.1");
    Ip vip = Ip.parse("192.0.2.1");
    VipHandover.Decision older = VipHandover.decide(List.of(s), Map.of(vip, B), A, Set.of(vip));
    VipHandover.Decision younger = VipHandover.decide(List.of(s), Map.of(vip, A), B, Set.of(vip));
    assertThat(older.vips()).containsExactly(s);
    assertThat(younger.vips()).isEmpty();
    // Not rendered here yet: it waits even when this group is the older one (the other holds it now).
    assertThat(VipHandover.decide(List.of(s), Map.of(vip, B), A, Set.of()).vips()).isEmpty();
  }

  @Test
  void readsTheVipsOfEveryVirtualIpaddressBlock() {
    String conf = """
        vrrp_instance a {
            virtual_router_id 7
            virtual_ipaddress {
                192.0.2.1
                192.0.2.2/32 dev eth0
            }
            virtual_ipaddress_excluded {
                2001:db8::5
            }
            track_script {
                chk
            }
        }
        """;
    assertThat(VipHandover.rendered(Map.of("n1", conf, "n2", "global_defs {\n}\n")))
        .containsExactly(Ip.parse("192.0.2.1"), Ip.parse("192.0.2.2"), Ip.parse("2001:db8::5"));
  }
}
