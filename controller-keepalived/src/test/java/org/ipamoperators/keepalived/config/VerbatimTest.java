package org.ipamoperators.keepalived.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class VerbatimTest {

  @Test
  void plainKeywordLinesAreAcceptedSortedAndStripped() {
    Verbatim.Checked checked = Verbatim.checkService(Map.of("track_src_ip", "", "garp_master_delay", " 1 ",
        "mcast_src_ip", "192.0.2.1"));

    assertThat(checked.rejected()).isEmpty();
    assertThat(checked.accepted()).containsExactly(Map.entry("garp_master_delay", "1"),
        Map.entry("mcast_src_ip", "192.0.2.1"), Map.entry("track_src_ip", ""));
  }

  @Test
  void anEntryCannotLeaveItsLine() {
    Verbatim.Checked checked = Verbatim.checkService(Map.of(
        "garp_master_delay", "1\n}\nvrrp_instance evil {",
        "smtp_alert", "yes } vrrp_instance x {",
        "garp_master_repeat", "5 # hidden",
        "lower_prio_no_advert", "true ! hidden",
        "higher_prio_send_advert", "\"unbalanced",
        "Bad-Key", "1",
        "with space", "1"));

    assertThat(checked.accepted()).isEmpty();
    assertThat(checked.rejected()).extracting(Verbatim.Rejection::key).containsExactlyInAnyOrder(
        "garp_master_delay", "smtp_alert", "garp_master_repeat", "lower_prio_no_advert", "higher_prio_send_advert",
        "Bad-Key", "with space");
  }

  @Test
  void aServiceCannotRunProgramsOrOverrideManagedKeys() {
    Verbatim.Checked checked = Verbatim.checkService(Map.of(
        "notify_master", "\"/bin/sh -c id\"",
        "notify", "/usr/local/bin/x",
        "track_script", "x",
        "include", "/etc/passwd",
        "virtual_router_id", "9",
        "priority", "255",
        "unicast_peer", "192.0.2.9"));

    assertThat(checked.accepted()).isEmpty();
    assertThat(checked.rejected()).hasSize(7);
  }

  @Test
  void theGroupMayConfigureProgramsButNotTheManagedGlobalKeys() {
    Verbatim.Checked checked = Verbatim.checkGlobal(Map.of("notify_fifo", "\"/run/keepalived.fifo\"",
        "router_id", "x", "script_user", "nobody", "vrrp_iptables", "KEEPALIVED"));

    assertThat(checked.accepted()).containsOnlyKeys("notify_fifo", "vrrp_iptables");
    assertThat(checked.rejected()).extracting(Verbatim.Rejection::key).containsExactly("router_id", "script_user");
  }
}
