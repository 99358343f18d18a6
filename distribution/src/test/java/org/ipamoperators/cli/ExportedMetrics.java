package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The Prometheus series each controller exports, by the names a scrape shows: what the chart's
 * dashboards and alerts may read. The manifest ITs scrape each running controller and check this
 * table against what it serves ({@link #assertServed}), so a renamed metric fails there and the
 * dashboards' check ({@link DashboardsIT}) follows.
 */
final class ExportedMetrics {
  /** Every controller's operator process. */
  private static final List<String> COMMON = List.of("ipam_operator_leader", "ipam_audit_findings",
      "ipam_audit_runs_total", "ipam_audit_failures_total", "ipam_audit_repairs_total");

  private static final Map<String, List<String>> OPERATOR = Map.of(
      "egressip", List.of("ipam_egressip_ip_capacity", "ipam_egressip_ip_allocated", "egressip_ip_capacity",
          "egressip_ip_allocated", "ipam_egressip_cidr_capacity", "ipam_egressip_cidr_allocated",
          "ipam_egressip_cidr_free", "ipam_egressip_namespaces", "ipam_egressip_unplaceable_ips",
          "ipam_egressip_reconciles_total", "ipam_egressip_plan_namespaces_total",
          "ipam_egressip_failovers_total", "ipam_egressip_plan_mismatches_total",
          "ipam_egressip_orphans_taken_off_total", "ipam_azure_calls_total", "ipam_azure_call_failures_total"),
      "vip", List.of("ipam_vip_pool_used", "ipam_vip_pool_size", "ipam_vip_pool_free", "ipam_vip_services_pending",
          "ipam_vip_allocations_total"),
      "keepalived", List.of("ipam_keepalived_group_router_ids", "ipam_keepalived_group_instances_without_router_id",
          "ipam_keepalived_group_instances", "ipam_keepalived_group_vips", "ipam_keepalived_group_services",
          "ipam_keepalived_group_services_with_problems", "ipam_keepalived_group_nodes",
          "ipam_keepalived_group_config_changes_total"),
      "eip", List.of("ipam_eip_allocated", "ipam_eip_associated", "ipam_eip_quota", "ipam_eip_quota_used",
          "ipam_eip_allocate_failures_total"));

  /** Timers: a scrape shows {@code <name>_seconds_count}, {@code _sum} and {@code _max}. */
  private static final Map<String, List<String>> TIMERS = Map.of(
      "egressip", List.of("ipam_egressip_reconcile_duration", "ipam_egressip_plan_duration",
          "ipam_egressip_pass_step_duration", "ipam_egressip_failover_duration", "ipam_azure_move_gap"));

  /** The config reloader in each KeepalivedGroup pod (KeepalivedReloaderCommandIT scrapes it). */
  static final List<String> KEEPALIVED_POD = List.of("ipam_keepalived_up", "ipam_keepalived_reloads_total",
      "ipam_keepalived_config_refused_total", "ipam_keepalived_vrrp_state", "keepalived_vrrp_state");

  /**
   * Series that appear only once their event happened (a counter's first increment, a labelled
   * series' first value), so a short scenario may not show them.
   */
  static final Set<String> AFTER_AN_EVENT = Set.of("ipam_egressip_failovers_total",
      "ipam_egressip_plan_mismatches_total", "ipam_egressip_orphans_taken_off_total",
      "ipam_egressip_failover_duration_seconds_count", "ipam_egressip_failover_duration_seconds_sum",
      "ipam_egressip_failover_duration_seconds_max", "ipam_eip_allocate_failures_total",
      "ipam_keepalived_group_config_changes_total", "ipam_audit_findings", "ipam_audit_runs_total",
      "ipam_audit_failures_total", "ipam_audit_repairs_total", "ipam_azure_calls_total",
      "ipam_azure_call_failures_total", "ipam_azure_move_gap_seconds_count", "ipam_azure_move_gap_seconds_sum",
      "ipam_azure_move_gap_seconds_max");

  private static final Pattern SAMPLE = Pattern.compile("(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]");

  private ExportedMetrics() {}

  /** What a controller's deployment exports: its operator, and for keepalived its group pods too. */
  static Set<String> of(String controller) {
    Set<String> out = new LinkedHashSet<>(operator(controller));
    if (controller.equals("keepalived")) {
      out.addAll(KEEPALIVED_POD);
    }
    return out;
  }

  /** What a controller's operator process exports. */
  static Set<String> operator(String controller) {
    Set<String> out = new LinkedHashSet<>(COMMON);
    out.addAll(OPERATOR.getOrDefault(controller, List.of()));
    TIMERS.getOrDefault(controller, List.of()).forEach(t ->
        Stream.of("_seconds_count", "_seconds_sum", "_seconds_max").forEach(s -> out.add(t + s)));
    return out;
  }

  /** The sample names of a Prometheus text scrape. */
  static Set<String> served(String scrape) {
    Set<String> out = new LinkedHashSet<>();
    Matcher m = SAMPLE.matcher(scrape);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  /**
   * Every series of the table for {@code controller}'s operator is in the scrape, but those that need an event,
   * and the scrape has no series of ours the table lacks.
   */
  static void assertServed(String controller, String scrape) {
    Set<String> served = served(scrape);
    Set<String> expected = operator(controller);
    expected.stream().filter(n -> !AFTER_AN_EVENT.contains(n)).forEach(n ->
        assertThat(served).as("%s exports %s", controller, n).contains(n));
    served.stream().filter(n -> n.startsWith("ipam_") || n.startsWith("egressip_") || n.startsWith("keepalived_"))
        .forEach(n -> assertThat(expected).as("%s's scrape has %s: add it to ExportedMetrics", controller, n)
            .contains(n));
  }
}
