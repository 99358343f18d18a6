package org.ipamoperators.vip;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Arrays;
import java.util.List;
import org.ipamoperators.vip.api.FamilyUsage;
import org.junit.jupiter.api.Test;

/** The pool gauges as Prometheus scrapes them; a family or IPGroup that goes takes its series along. */
class VipMetricsTest {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final VipMetrics metrics = new VipMetrics(registry);

  private List<String> scraped() {
    return Arrays.stream(registry.scrape().split("\n")).filter(l -> l.matches("(# (HELP|TYPE) )?ipam_vip_.*"))
        .sorted().toList();
  }

  @Test
  void poolGaugesFollowTheGroupsFamilies() {
    metrics.pool("p1", List.of(new FamilyUsage("IPv4", "5", "2", "3"), new FamilyUsage("IPv6", "10", "0", "10")));
    metrics.pool("p2", List.of(new FamilyUsage("IPv4", "1", "1", "0")));
    metrics.allocated("ipgroup/p1");
    metrics.pending("ns/s", true);
    assertThat(scraped()).contains(
        "# HELP ipam_vip_pool_size Addresses an IPGroup can hand out",
        "# TYPE ipam_vip_pool_size gauge",
        "# HELP ipam_vip_pool_used Addresses of an IPGroup claimed in the ledger (by anyone)",
        "# HELP ipam_vip_pool_free Addresses of an IPGroup still free",
        "ipam_vip_pool_size{family=\"IPv4\",ipgroup=\"p1\"} 5.0",
        "ipam_vip_pool_used{family=\"IPv4\",ipgroup=\"p1\"} 2.0",
        "ipam_vip_pool_free{family=\"IPv4\",ipgroup=\"p1\"} 3.0",
        "ipam_vip_pool_size{family=\"IPv6\",ipgroup=\"p1\"} 10.0",
        "ipam_vip_pool_free{family=\"IPv4\",ipgroup=\"p2\"} 0.0",
        "ipam_vip_allocations_total{ipgroup=\"p1\"} 1.0",
        "ipam_vip_services_pending 1.0");

    metrics.pool("p1", List.of(new FamilyUsage("IPv4", "5", "3", "2"))); // IPv6 dropped
    assertThat(scraped()).contains("ipam_vip_pool_used{family=\"IPv4\",ipgroup=\"p1\"} 3.0",
            "ipam_vip_pool_free{family=\"IPv4\",ipgroup=\"p1\"} 2.0", "ipam_vip_pool_size{family=\"IPv4\",ipgroup=\"p2\"} 1.0")
        .noneMatch(l -> l.contains("IPv6"));

    metrics.forget("p1");
    metrics.pending("ns/s", false);
    assertThat(scraped()).noneMatch(l -> l.contains("ipgroup=\"p1\""))
        .contains("ipam_vip_pool_size{family=\"IPv4\",ipgroup=\"p2\"} 1.0", "ipam_vip_services_pending 0.0");
  }
}
