package org.ipamoperators.egressip;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The gauges as Prometheus scrapes them: names, labels and values per round; series of what is gone removed. */
class EgressMetricsTest {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final EgressMetrics metrics = new EgressMetrics(registry);

  private List<String> scraped() {
    return Arrays.stream(registry.scrape().split("\n"))
        .filter(l -> l.matches("(# (HELP|TYPE) )?(ipam_)?egressip_(ip|cidr|namespaces|unplaceable).*")).sorted().toList();
  }

  private void nodes(String ipam, double capacity, String... nodes) {
    var round = metrics.round(ipam);
    for (String n : nodes) {
      for (String prefix : EgressMetrics.NODE_GAUGE_PREFIXES) {
        round.gauge(prefix + "ip_capacity", "Egress IPs a node can hold, its own address included", capacity, "node", n);
        round.gauge(prefix + "ip_allocated", "Egress IPs placed on a node, its own address included", 2, "node", n);
      }
    }
    round.gauge("ipam_egressip_namespaces", "Opted-in namespaces by state", 1, "state", "assigned");
    round.gauge("ipam_egressip_namespaces", "Opted-in namespaces by state", 0, "state", "pending");
    if (nodes.length > 1) {
      round.gauge("ipam_egressip_unplaceable_ips", "Addresses no node can host now", 3);
    }
    round.close();
  }

  @Test
  void eachRoundSetsItsSeriesAndRemovesThoseNotSetAgain() {
    nodes("a", 4, "n1", "n2");
    nodes("b", Double.POSITIVE_INFINITY, "n3");
    assertThat(scraped()).contains(
        "# HELP ipam_egressip_ip_capacity Egress IPs a node can hold, its own address included",
        "# TYPE ipam_egressip_ip_capacity gauge",
        "# TYPE egressip_ip_allocated gauge",
        "# TYPE ipam_egressip_unplaceable_ips gauge",
        "ipam_egressip_ip_capacity{egressipam=\"a\",node=\"n1\"} 4.0",
        "ipam_egressip_ip_capacity{egressipam=\"a\",node=\"n2\"} 4.0",
        "egressip_ip_capacity{egressipam=\"a\",node=\"n2\"} 4.0",
        "egressip_ip_allocated{egressipam=\"a\",node=\"n1\"} 2.0",
        "ipam_egressip_ip_capacity{egressipam=\"b\",node=\"n3\"} +Inf",
        "ipam_egressip_namespaces{egressipam=\"a\",state=\"assigned\"} 1.0",
        "ipam_egressip_namespaces{egressipam=\"a\",state=\"pending\"} 0.0",
        "ipam_egressip_unplaceable_ips{egressipam=\"a\"} 3.0");

    nodes("a", 5, "n1"); // n2 gone, nothing unplaceable reported
    assertThat(scraped()).contains("ipam_egressip_ip_capacity{egressipam=\"a\",node=\"n1\"} 5.0",
            "egressip_ip_capacity{egressipam=\"a\",node=\"n1\"} 5.0",
            "ipam_egressip_ip_capacity{egressipam=\"b\",node=\"n3\"} +Inf")
        .noneMatch(l -> l.contains("node=\"n2\"")).noneMatch(l -> l.startsWith("ipam_egressip_unplaceable_ips{"))
        .filteredOn(l -> l.startsWith("ipam_egressip_ip_capacity{")).hasSize(2);
  }

  @Test
  void aForgottenIpamLosesAllItsSeriesOthersKeepTheirs() {
    nodes("a", 4, "n1", "n2");
    nodes("b", 2, "n3");
    metrics.pass("a", java.time.Duration.ofMillis(5));
    metrics.forget("a");
    assertThat(scraped()).noneMatch(l -> l.contains("egressipam=\"a\""))
        .contains("ipam_egressip_ip_capacity{egressipam=\"b\",node=\"n3\"} 2.0",
            "ipam_egressip_namespaces{egressipam=\"b\",state=\"assigned\"} 1.0");
    assertThat(registry.getMeters()).noneMatch(m -> "a".equals(m.getId().getTag("egressipam")));
    nodes("a", 7, "n1");
    assertThat(scraped()).contains("ipam_egressip_ip_capacity{egressipam=\"a\",node=\"n1\"} 7.0");
  }
}
