package org.ipamoperators.keepalived;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Per-group gauges (labels {@code namespace}, {@code keepalivedgroup}): router ids held, instances without one,
 * instances, VIPs, attached services, services with problems, nodes; and a counter of configuration changes
 * written. A deleted group's series are removed.
 */
final class KeepalivedMetrics {
  static final List<String> GAUGES = List.of(
      "ipam_keepalived_group_router_ids", "ipam_keepalived_group_instances_without_router_id", "ipam_keepalived_group_instances",
      "ipam_keepalived_group_vips", "ipam_keepalived_group_services", "ipam_keepalived_group_services_with_problems",
      "ipam_keepalived_group_nodes");

  private final MeterRegistry registry;
  private final Map<String, AtomicLong> values = new ConcurrentHashMap<>();

  KeepalivedMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Numbers of one group in the order of {@link #GAUGES}. */
  void set(String namespace, String name, long... numbers) {
    for (int i = 0; i < GAUGES.size(); i++) {
      String gauge = GAUGES.get(i);
      AtomicLong holder = values.computeIfAbsent(namespace + "/" + name + "/" + gauge, k -> {
        AtomicLong h = new AtomicLong();
        Gauge.builder(gauge, h, AtomicLong::get).tags(tags(namespace, name)).register(registry);
        return h;
      });
      holder.set(numbers[i]);
    }
  }

  void configWritten(String namespace, String name) {
    Counter.builder("ipam_keepalived_group_config_changes").description("ConfigMap contents changed for the group")
        .tags(tags(namespace, name)).register(registry).increment();
  }

  void forget(String namespace, String name) {
    values.keySet().removeIf(k -> k.startsWith(namespace + "/" + name + "/"));
    registry.getMeters().stream()
        .filter(m -> namespace.equals(m.getId().getTag("namespace")) && name.equals(m.getId().getTag("keepalivedgroup")))
        .forEach(registry::remove);
  }

  private static Tags tags(String namespace, String name) {
    return Tags.of("namespace", namespace, "keepalivedgroup", name);
  }
}
