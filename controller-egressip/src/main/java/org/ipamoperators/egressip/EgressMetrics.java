package org.ipamoperators.egressip;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import org.ipamoperators.controller.common.metrics.OwnedGauges;

/**
 * The controller's metrics, all named {@code ipam_egressip_*}. {@code ipam_egressip_ip_capacity} and
 * {@code ipam_egressip_ip_allocated} ({egressipam, node}) keep the old operator's meaning (allocated
 * counts the node's own address, +1) and are exported under its names too ({@code egressip_ip_*}),
 * so alerts written for it keep working; an unlimited node reports +Inf capacity so a utilisation
 * alert can never fire on it. Series of nodes and IPAMs that are gone are removed, not left stale.
 */
final class EgressMetrics {
  /** The per-node gauges' prefixes: ours, then the old operator's (an alias). */
  static final java.util.List<String> NODE_GAUGE_PREFIXES = java.util.List.of("ipam_egressip_", "egressip_");

  private final MeterRegistry registry;
  private final OwnedGauges gauges;

  EgressMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.gauges = new OwnedGauges(registry, "egressipam");
  }

  /** Sets every gauge of one IPAM for this reconcile; series not set again are removed when it is closed. */
  OwnedGauges.Round round(String ipam) {
    return gauges.round(ipam);
  }

  /** One reconcile pass of an IPAM: how often and how long the controller works, to see that cost follows change. */
  void pass(String ipam, Duration took) {
    Counter.builder("ipam_egressip_reconciles").description("Reconcile passes of an EgressIPAM")
        .tag("egressipam", ipam).register(registry).increment();
    Timer.builder("ipam_egressip_reconcile_duration").description("Time of one reconcile pass of an EgressIPAM")
        .tag("egressipam", ipam).register(registry).record(took);
  }

  /**
   * The fetch and decide steps of one pass (the informer reads and the pure policy), and how many
   * namespaces were decided again or reused from the previous pass's plan.
   */
  void plan(String ipam, Duration took, int decided, int reused) {
    Timer.builder("ipam_egressip_plan_duration").description("Time to read the caches and decide one pass of an EgressIPAM")
        .tag("egressipam", ipam).register(registry).record(took);
    Counter.builder("ipam_egressip_plan_namespaces").description("Namespaces planned, decided again or reused as settled")
        .tag("egressipam", ipam).tag("how", "decided").register(registry).increment(decided);
    Counter.builder("ipam_egressip_plan_namespaces").description("Namespaces planned, decided again or reused as settled")
        .tag("egressipam", ipam).tag("how", "reused").register(registry).increment(reused);
  }

  /** One step of a pass (claim and publish, network write), to see where a pass's time goes. */
  void step(String ipam, String step, Duration took) {
    Timer.builder("ipam_egressip_pass_step_duration").description("Time of one step of a reconcile pass")
        .tag("egressipam", ipam).tag("step", step).register(registry).record(took);
  }

  /** A periodic full plan differed from the incremental one (the full one was used). */
  void planMismatch(String ipam) {
    Counter.builder("ipam_egressip_plan_mismatches").description("Periodic full plans that differed from the incremental plan")
        .tag("egressipam", ipam).register(registry).increment();
  }

  /** An orphan (marked ours on an interface, claimed by nobody) taken off its node. */
  void orphanTakenOff(String ipam) {
    Counter.builder("ipam_egressip_orphans_taken_off").description(
            "Addresses marked as ours on a node's interface but claimed by nobody, taken off after the grace")
        .tag("egressipam", ipam).register(registry).increment();
  }

  void failover(String ipam, Duration sinceNodeFailed) {
    Counter.builder("ipam_egressip_failovers").description("Addresses moved off failed nodes")
        .tag("egressipam", ipam).register(registry).increment();
    Timer.builder("ipam_egressip_failover_duration").description("From a node counting as failed to its addresses being moved")
        .tag("egressipam", ipam).publishPercentileHistogram().register(registry).record(sinceNodeFailed);
  }

  void forget(String ipam) {
    gauges.forget(ipam);
    registry.getMeters().stream().filter(m -> ipam.equals(m.getId().getTag("egressipam")))
        .forEach(registry::remove);
  }
}
