package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The Prometheus series each controller exports, by the names a scrape shows, with their type, labels and meaning:
 * what the chart's dashboards and alerts may read, and the source of docs/metrics.md ({@link MetricsReferenceTest}
 * renders the page from this table). The manifest ITs scrape each running controller and check this table against
 * what it serves ({@link #assertServed}), so a renamed metric fails there and the dashboards' check
 * ({@link DashboardsIT}) follows.
 */
final class ExportedMetrics {
  /** One metric: counters are named with their {@code _total}, timers by their base name. */
  record Metric(String name, String type, List<String> labels, String meaning, String aliasOf, boolean afterAnEvent) {
    /** The sample names a scrape shows for it. */
    List<String> series() {
      return switch (type) {
        case "timer" -> Stream.of("_seconds_count", "_seconds_sum", "_seconds_max").map(s -> name + s).toList();
        case "histogram" -> Stream.of("_seconds_bucket", "_seconds_count", "_seconds_sum", "_seconds_max")
            .map(s -> name + s).toList();
        default -> List.of(name);
      };
    }

    /** The same metric seen only after its first event (a counter's first increment, a series' first value). */
    Metric onEvent() {
      return new Metric(name, type, labels, meaning, aliasOf, true);
    }
  }

  /** Where a group of metrics is served: its title in the reference and the metrics themselves. */
  record Source(String title, String where, List<Metric> metrics) {}

  /** Every controller's operator process. */
  private static final Source COMMON = new Source("Every operator", "the `/metrics` port of every controller's"
      + " operator process (chart: the PodMonitor or ServiceMonitor of each controller)", List.of(
      gauge("ipam_operator_leader", "1 while this replica holds the leader-election Lease (always 0 without leader"
          + " election): exactly one replica per controller should show 1"),
      gauge("ipam_audit_findings", "problems found by the last periodic audit (`--audit-interval`, on the leader) of the"
          + " ledgers against what the controllers publish, per kind: duplicate, double_claim, leak, orphan, drift"
          + " (as `ipam audit` reports them)", "kind").onEvent(),
      counter("ipam_audit_runs_total", "periodic audits run").onEvent(),
      counter("ipam_audit_failures_total", "periodic audits that could not read the cluster").onEvent(),
      counter("ipam_audit_repairs_total", "claims the periodic audit released as provably safe (owner gone, shown by"
          + " nobody)").onEvent()));

  private static final Source EGRESSIP = new Source("egressip", "the egressip controller's operator", List.of(
      gauge("ipam_egressip_ip_capacity", "egress IPs a node can hold, its own address included; +Inf when unlimited,"
          + " 0 when unknown", "egressipam", "node"),
      gauge("ipam_egressip_ip_allocated", "egress IPs placed on a node, its own address included", "egressipam", "node"),
      alias("egressip_ip_capacity", "ipam_egressip_ip_capacity", "egressip-ipam-operator", "egressipam", "node"),
      alias("egressip_ip_allocated", "ipam_egressip_ip_allocated", "egressip-ipam-operator", "egressipam", "node"),
      gauge("ipam_egressip_cidr_capacity", "usable addresses of a CIDR of the EgressIPAM", "egressipam", "cidr"),
      gauge("ipam_egressip_cidr_allocated", "addresses of a CIDR held by namespaces", "egressipam", "cidr"),
      gauge("ipam_egressip_cidr_free", "free addresses of a CIDR", "egressipam", "cidr"),
      gauge("ipam_egressip_namespaces", "opted-in namespaces by state: assigned, pending, rejected", "egressipam",
          "state"),
      gauge("ipam_egressip_unplaceable_ips", "addresses no node can host now", "egressipam"),
      counter("ipam_egressip_reconciles_total", "reconcile passes of an EgressIPAM", "egressipam"),
      timer("ipam_egressip_reconcile_duration", "time of one reconcile pass of an EgressIPAM", "egressipam"),
      timer("ipam_egressip_plan_duration", "time to read the caches and decide one pass", "egressipam"),
      counter("ipam_egressip_plan_namespaces_total", "namespaces planned in a pass, by how: decided (again) or reused"
          + " as settled", "egressipam", "how"),
      timer("ipam_egressip_pass_step_duration", "time of one step of a pass: claim+publish, network", "egressipam",
          "step"),
      counter("ipam_egressip_failovers_total", "addresses moved off failed nodes", "egressipam").onEvent(),
      new Metric("ipam_egressip_failover_duration", "histogram", List.of("egressipam"), "from a node counting as"
          + " failed to its addresses being moved (with buckets)", null, true),
      counter("ipam_egressip_plan_mismatches_total", "periodic full plans that differed from the incremental plan (the"
          + " full one was used)", "egressipam").onEvent(),
      counter("ipam_egressip_orphans_taken_off_total", "addresses marked as ours on a node's interface but claimed by"
          + " nobody, taken off after the grace", "egressipam").onEvent(),
      counter("ipam_azure_calls_total", "Azure Resource Manager calls (platform Azure)", "call").onEvent(),
      counter("ipam_azure_call_failures_total", "Azure Resource Manager calls that failed after retries", "call",
          "code").onEvent(),
      timer("ipam_azure_move_gap", "time a moved address was on no NIC (platform Azure)").onEvent()));

  private static final Source VIP = new Source("vip", "the vip controller's operator", List.of(
      gauge("ipam_vip_pool_size", "addresses an IPGroup can hand out, per family", "ipgroup", "family"),
      gauge("ipam_vip_pool_used", "addresses of an IPGroup claimed in the ledger (by anyone)", "ipgroup", "family"),
      gauge("ipam_vip_pool_free", "addresses of an IPGroup still free", "ipgroup", "family"),
      gauge("ipam_vip_services_pending", "LoadBalancer Services served here still without an address"),
      counter("ipam_vip_allocations_total", "addresses newly claimed for LoadBalancer Services", "ipgroup")));

  private static final Source KEEPALIVED = new Source("keepalived", "the keepalived controller's operator", List.of(
      gauge("ipam_keepalived_group_router_ids", "VRRP router ids the group holds in the shared ledger", "namespace",
          "keepalivedgroup"),
      gauge("ipam_keepalived_group_instances_without_router_id", "VRRP instances that got no router id (the group's"
          + " quota or the id space is exhausted)", "namespace", "keepalivedgroup"),
      gauge("ipam_keepalived_group_instances", "VRRP instances of the group", "namespace", "keepalivedgroup"),
      gauge("ipam_keepalived_group_vips", "VIPs the group announces", "namespace", "keepalivedgroup"),
      gauge("ipam_keepalived_group_services", "Services attached to the group", "namespace", "keepalivedgroup"),
      gauge("ipam_keepalived_group_services_with_problems", "attached Services with a problem (see their Events)",
          "namespace", "keepalivedgroup"),
      gauge("ipam_keepalived_group_nodes", "nodes the group's DaemonSet selects", "namespace", "keepalivedgroup"),
      counter("ipam_keepalived_group_config_changes_total", "changes of the group's keepalived configuration written"
          + " to its ConfigMap", "namespace", "keepalivedgroup").onEvent()));

  private static final Source KEEPALIVED_RELOADER = new Source("keepalived group pods", "the config reloader in each"
      + " KeepalivedGroup pod (`ipam keepalived-reloader`, the port the controller gives the group)", List.of(
      gauge("ipam_keepalived_up", "1 while the keepalived process of the PID file runs"),
      counter("ipam_keepalived_reloads_total", "configuration changes applied to keepalived with SIGHUP"),
      counter("ipam_keepalived_config_refused_total", "configurations `keepalived --config-test` refused (the running"
          + " one was kept)"),
      gauge("ipam_keepalived_vrrp_state", "each VRRP instance's state: 0 INIT, 1 BACKUP, 2 MASTER, 3 FAULT", "name",
          "vrid", "intf"),
      alias("keepalived_vrrp_state", "ipam_keepalived_vrrp_state", "keepalived_exporter", "name", "vrid", "intf")));

  private static final Source EIP = new Source("eip", "the eip controller's operator", List.of(
      gauge("ipam_eip_allocated", "Eips holding an Elastic IP"),
      gauge("ipam_eip_associated", "Eips whose Elastic IP is associated with their pod or node"),
      gauge("ipam_eip_quota", "Elastic IP quota of the region (Service Quotas L-0263D0A3, else the EC2 account"
          + " attribute vpc-max-elastic-ips), -1 until known"),
      gauge("ipam_eip_quota_used", "Elastic IPs of the account in the region, -1 until known"),
      counter("ipam_eip_allocate_failures_total", "AllocateAddress failures by AWS error code", "reason").onEvent()));

  /** The reference's sections, in its order. */
  static final List<Source> SOURCES = List.of(COMMON, EGRESSIP, VIP, KEEPALIVED, KEEPALIVED_RELOADER, EIP);

  private static final Map<String, Source> OPERATOR = Map.of("egressip", EGRESSIP, "vip", VIP, "keepalived",
      KEEPALIVED, "eip", EIP);

  /** The config reloader in each KeepalivedGroup pod (KeepalivedReloaderCommandIT scrapes it). */
  static final List<String> KEEPALIVED_POD = series(KEEPALIVED_RELOADER.metrics().stream()).toList();

  /**
   * Series that appear only once their event happened (a counter's first increment, a labelled
   * series' first value), so a short scenario may not show them.
   */
  static final Set<String> AFTER_AN_EVENT = series(SOURCES.stream().flatMap(s -> s.metrics().stream())
      .filter(Metric::afterAnEvent)).collect(Collectors.toUnmodifiableSet());

  private static final Pattern SAMPLE = Pattern.compile("(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]");

  private ExportedMetrics() {}

  private static Metric gauge(String name, String meaning, String... labels) {
    return new Metric(name, "gauge", List.of(labels), meaning, null, false);
  }

  private static Metric counter(String name, String meaning, String... labels) {
    return new Metric(name, "counter", List.of(labels), meaning, null, false);
  }

  private static Metric timer(String name, String meaning, String... labels) {
    return new Metric(name, "timer", List.of(labels), meaning, null, false);
  }

  /** An old operator's name served beside ours, with the same labels and values. */
  private static Metric alias(String name, String of, String oldOperator, String... labels) {
    return new Metric(name, "gauge", List.of(labels), "the same series as `" + of + "`, under the name " + oldOperator
        + "'s alerts and dashboards use", of, false);
  }

  private static Stream<String> series(Stream<Metric> metrics) {
    return metrics.flatMap(m -> m.series().stream());
  }

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
    Set<String> out = new LinkedHashSet<>();
    series(COMMON.metrics().stream()).forEach(out::add);
    Source own = OPERATOR.get(controller);
    if (own != null) {
      series(own.metrics().stream()).forEach(out::add);
    }
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
