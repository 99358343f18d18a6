package org.ipamoperators.vip;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
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
  private final Map<Meter.Id, AtomicReference<Double>> values = new ConcurrentHashMap<>();
  private final Map<String, Set<Meter.Id>> byGroup = new ConcurrentHashMap<>();
  private final Set<String> pending = ConcurrentHashMap.newKeySet();

  VipMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder(PENDING, pending, Set::size).description("LoadBalancer Services served here still without an address")
        .register(registry);
  }

  /** Sets the usage gauges of one IPGroup; families it no longer has lose their series. */
  synchronized void pool(String group, List<FamilyUsage> families) {
    Set<Meter.Id> seen = new HashSet<>();
    for (FamilyUsage f : families) {
      seen.add(gauge(SIZE, "Addresses an IPGroup can hand out", group, f.family(), Double.parseDouble(f.total())));
      seen.add(gauge(USED, "Addresses of an IPGroup claimed in the ledger (by anyone)", group, f.family(),
          Double.parseDouble(f.used())));
      seen.add(gauge(FREE, "Addresses of an IPGroup still free", group, f.family(), Double.parseDouble(f.free())));
    }
    for (Meter.Id id : byGroup.getOrDefault(group, Set.of())) {
      if (!seen.contains(id)) {
        registry.remove(id);
        values.remove(id);
      }
    }
    byGroup.put(group, seen);
  }

  private Meter.Id gauge(String name, String description, String group, String family, double value) {
    Tags tags = Tags.of("ipgroup", group, "family", family);
    Meter.Id probe = new Meter.Id(name, tags, null, null, Meter.Type.GAUGE);
    AtomicReference<Double> holder = values.get(probe);
    if (holder != null) {
      holder.set(value);
      return probe;
    }
    AtomicReference<Double> fresh = new AtomicReference<>(value);
    Gauge g = Gauge.builder(name, fresh, AtomicReference::get).description(description).tags(tags).register(registry);
    values.put(g.getId(), fresh);
    return g.getId();
  }

  /** The IPGroup is gone: its series go too. */
  synchronized void forget(String group) {
    for (Meter.Id id : byGroup.getOrDefault(group, Set.of())) {
      registry.remove(id);
      values.remove(id);
    }
    byGroup.remove(group);
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
