package org.ipamoperators.cloud.azure;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * Azure calls by name ({@code ipam_azure_calls_total{call}}), failures by name and Azure error code
 * ({@code ipam_azure_call_failures_total{call,code}}), and how long moved addresses were on no NIC
 * ({@code ipam_azure_move_gap_seconds}): Azure never lets one address be on two NICs.
 */
final class AzureMetrics {
  private final MeterRegistry registry;

  AzureMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  void call(String call) {
    Counter.builder("ipam.azure.calls").description("Azure Resource Manager calls").tag("call", call)
        .register(registry).increment();
  }

  void failure(String call, String code) {
    Counter.builder("ipam.azure.call.failures").description("Azure Resource Manager calls that failed after retries")
        .tag("call", call).tag("code", code == null ? "unknown" : code).register(registry).increment();
  }

  void moveGap(Duration gap) {
    Timer.builder("ipam.azure.move.gap").description("time a moved address was on no NIC").register(registry)
        .record(gap);
  }
}
