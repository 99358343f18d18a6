package org.ipamoperators.eip;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code ipam_eip_allocated} and {@code ipam_eip_associated} (Eips with an address / with it associated), {@code ipam_eip_quota}
 * and {@code ipam_eip_quota_used} (the region's Elastic IP limit, from Service Quotas' L-0263D0A3 else the EC2 account
 * attribute, and the addresses of the whole account there, measured
 * by each orphan sweep; -1 until known), {@code ipam_eip_allocate_failures_total{reason}} (AWS's error code).
 */
final class EipMetrics {
  private final MeterRegistry registry;
  private final Map<String, int[]> perEip = new ConcurrentHashMap<>();
  private final AtomicLong quota = new AtomicLong(-1);
  private final AtomicLong quotaUsed = new AtomicLong(-1);

  EipMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("ipam.eip.allocated", perEip, m -> m.values().stream().mapToInt(v -> v[0]).sum())
        .description("Eips holding an Elastic IP").register(registry);
    Gauge.builder("ipam.eip.associated", perEip, m -> m.values().stream().mapToInt(v -> v[1]).sum())
        .description("Eips whose Elastic IP is associated with their pod or node").register(registry);
    Gauge.builder("ipam.eip.quota", quota, AtomicLong::get)
        .description("Elastic IP quota of the region (Service Quotas L-0263D0A3, else the EC2 account attribute"
            + " vpc-max-elastic-ips), -1 until known").register(registry);
    Gauge.builder("ipam.eip.quota.used", quotaUsed, AtomicLong::get)
        .description("Elastic IPs of the account in the region, -1 until known").register(registry);
  }

  void eip(String key, boolean allocated, boolean associated) {
    perEip.put(key, new int[] {allocated ? 1 : 0, associated ? 1 : 0});
  }

  void gone(String key) {
    perEip.remove(key);
  }

  void quota(long limit, long used) {
    quota.set(limit);
    quotaUsed.set(used);
  }

  void allocateFailed(String reason) {
    Counter.builder("ipam.eip.allocate.failures").description("AllocateAddress failures by AWS error code")
        .tag("reason", reason).register(registry).increment();
  }
}
