package org.ipamoperators.controller.common.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** Rounds of labelled gauges per owner: values set, series not set again removed, a forgotten owner's gone. */
class OwnedGaugesTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final OwnedGauges gauges = new OwnedGauges(registry, "owner");

  private Double value(String name, String owner, String node) {
    Gauge g = registry.find(name).tag("owner", owner).tag("node", node).gauge();
    return g == null ? null : g.value();
  }

  @Test
  void aSeriesThatStaysIsRegisteredOnceAndReadsTheLatestRound() {
    gauges.round("a").gauge("g", "d", 1, "node", "n1").gauge("g", "d", 2, "node", "n2").close();
    Gauge first = registry.find("g").tag("node", "n1").gauge();
    gauges.round("a").gauge("g", "d", 5, "node", "n1").close();
    assertThat(registry.find("g").tag("node", "n1").gauge()).isSameAs(first);
    assertThat(value("g", "a", "n1")).isEqualTo(5.0);
    assertThat(value("g", "a", "n2")).isNull();
    assertThat(first.getId().getDescription()).isEqualTo("d");
  }

  @Test
  void namesNotSetAgainAndForgottenOwnersLoseTheirSeriesOthersKeepTheirs() {
    gauges.round("a").gauge("g", "d", 1, "node", "n1").gauge("h", "d", 3).close();
    gauges.round("b").gauge("g", "d", 2, "node", "n1").close();
    gauges.round("a").gauge("g", "d", 1, "node", "n1").close();
    assertThat(registry.find("h").meters()).isEmpty();
    gauges.forget("a");
    assertThat(registry.find("g").tag("owner", "a").meters()).isEmpty();
    assertThat(value("g", "b", "n1")).isEqualTo(2.0);
    gauges.round("a").gauge("g", "d", 7, "node", "n1").close();
    assertThat(value("g", "a", "n1")).isEqualTo(7.0);
  }
}
