package org.ipamoperators.controller.common.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Labelled gauges of the objects a controller reports on (an EgressIPAM, an IPGroup), each tagged with its
 * owner and set a round at a time through Micrometer's {@link MultiGauge}: a round sets every series of its
 * owner, series it does not set again are removed, and {@link #forget} removes all of an owner. A series
 * that stays is registered once and reads the latest round's value, so a scrape between rounds never misses it.
 */
public final class OwnedGauges {
  /** One gauge name of one owner: its MultiGauge and the values of its last round, by row tags. */
  private record Family(MultiGauge gauge, AtomicReference<Map<Tags, Double>> values) {
    void set(Map<Tags, Double> rows) {
      values.set(Map.copyOf(rows));
      gauge.register(rows.keySet().stream()
          .map(t -> MultiGauge.Row.of(t, values, v -> v.get().getOrDefault(t, Double.NaN))).toList(), false);
    }
  }

  private final MeterRegistry registry;
  private final String ownerTag;
  private final Map<String, Map<String, Family>> byOwner = new HashMap<>();

  /** Gauges whose series carry the owner's name under {@code ownerTag}. */
  public OwnedGauges(MeterRegistry registry, String ownerTag) {
    this.registry = registry;
    this.ownerTag = ownerTag;
  }

  /** A new round of {@code owner}'s gauges; nothing changes until it is closed. */
  public Round round(String owner) {
    return new Round(owner);
  }

  /** The owner is gone: all its series go. */
  public synchronized void forget(String owner) {
    Map<String, Family> families = byOwner.remove(owner);
    if (families != null) {
      families.values().forEach(f -> f.gauge().register(List.of()));
    }
  }

  private synchronized void commit(String owner, Map<String, String> descriptions, Map<String, Map<Tags, Double>> set) {
    Map<String, Family> families = byOwner.computeIfAbsent(owner, o -> new HashMap<>());
    families.entrySet().removeIf(f -> {
      if (set.containsKey(f.getKey())) {
        return false;
      }
      f.getValue().gauge().register(List.of()); // a name not set in this round loses all its series
      return true;
    });
    set.forEach((name, rows) -> families.computeIfAbsent(name, n -> new Family(
        MultiGauge.builder(n).description(descriptions.get(n)).tag(ownerTag, owner).register(registry),
        new AtomicReference<>(Map.of()))).set(rows));
  }

  /** The values of one owner's gauges for one reconcile. */
  public final class Round {
    private final String owner;
    private final Map<String, String> descriptions = new HashMap<>();
    private final Map<String, Map<Tags, Double>> values = new LinkedHashMap<>();

    private Round(String owner) {
      this.owner = owner;
    }

    /** Sets the series of {@code name} tagged with the owner and {@code tags} (key, value pairs). */
    public Round gauge(String name, String description, double value, String... tags) {
      descriptions.putIfAbsent(name, description);
      values.computeIfAbsent(name, n -> new LinkedHashMap<>()).put(Tags.of(tags), value);
      return this;
    }

    /** Publishes the round: its series take its values; the owner's series it did not set are removed. */
    public void close() {
      commit(owner, descriptions, values);
    }
  }
}
