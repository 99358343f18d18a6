package org.ipamoperators.vip;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.controller.common.metrics.OwnedGauges;
import org.ipamoperators.vip.api.FamilyUsage;

/**
 * The controller's metrics: per IPGroup and family {@code ipam_vip_pool_size}, {@code _used} and
 * {@code _free} (the numbers of its status), {@code ipam_vip_allocations} (addresses newly claimed
 * for Services, per IPGroup) and {@code ipam_vip_services_pending} (served Services still without an
 * address). The series of a deleted IPGroup, or of a family it no longer has, are removed.
 */
final class VipMetrics {
  static final String SIZE = "ipam_vip_pool_size";
  static final String USED = "ipam_vip_pool_used";
  static final String FREE = "ipam_vip_pool_free";
  static final String ALLOCATIONS = "ipam_vip_allocations";
  static final String PENDING = "ipam_vip_services_pending";

  private final MeterRegistry registry;
  private final OwnedGauges pools;
  private final Set<String> pending = ConcurrentHashMap.newKeySet();

  VipMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.pools = new OwnedGauges(registry, "ipgroup");
    Gauge.builder(PENDING, pending, Set::size).description("LoadBalancer Services served here still without an address")
        .register(registry);
  }

  /** Sets the usage gauges of one IPGroup; families it no longer has lose their series. */
  synchronized void pool(String group, List<FamilyUsage> families) {
    OwnedGauges.Round round = pools.round(group);
    for (FamilyUsage f : families) {
      round.gauge(SIZE, "Addresses an IPGroup can hand out", Double.parseDouble(f.total()), "family", f.family());
      round.gauge(USED, "Addresses of an IPGroup claimed in the ledger (by anyone)", Double.parseDouble(f.used()),
          "family", f.family());
      round.gauge(FREE, "Addresses of an IPGroup still free", Double.parseDouble(f.free()), "family", f.family());
    }
    round.close();
  }

  /** The IPGroup is gone: its series go too. */
  synchronized void forget(String group) {
    pools.forget(group);
    registry.getMeters().stream().filter(m -> group.equals(m.getId().getTag("ipgroup"))).forEach(registry::remove);
  }

  void allocated(String pool) {
    String group = pool.startsWith("ipgroup/") ? pool.substring("ipgroup/".length()) : pool;
    Counter.builder(ALLOCATIONS).description("Addresses newly claimed for LoadBalancer Services")
        .tag("ipgroup", group).register(registry).increment();
  }

  void pending(String service, boolean waiting) {
    if (waiting) {
      pending.add(service);
    } else {
      pending.remove(service);
    }
  }
}
