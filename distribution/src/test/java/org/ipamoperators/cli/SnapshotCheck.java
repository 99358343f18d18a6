package org.ipamoperators.cli;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * What the reliability runs look for in every snapshot of what the cluster shows (owner to its
 * addresses): an address shown by two owners, and an owner whose addresses changed since first seen.
 * With {@link Surfaces}, every publication surface at once ({@link #check(List)}): no address shown by two
 * different owners over all owner surfaces combined (namespace annotation, NetNamespace and OVN EgressIP of
 * a namespace, a Service's ingress: A's annotation and B's NetNamespace showing one address are two
 * holders), no address on two HostSubnets, no VIP in two KeepalivedGroups' rendered configurations.
 * Thread-safe: a watcher thread checks while the test thread does the final check.
 */
final class SnapshotCheck {
  private final Map<String, String> firstSeen = new ConcurrentHashMap<>();
  private final Set<String> duplicates = ConcurrentHashMap.newKeySet();
  private final Set<String> changed = ConcurrentHashMap.newKeySet();
  private final Set<String> unclaimed = ConcurrentHashMap.newKeySet();

  void check(Map<String, List<String>> shown) {
    Map<String, String> holder = new HashMap<>();
    shown.forEach((owner, ips) -> {
      for (String ip : ips) {
        String other = holder.putIfAbsent(ip, owner);
        if (other != null && !other.equals(owner)) {
          duplicates.add(ip + " on " + other + " and " + owner);
        }
      }
      String joined = String.join(",", ips);
      String before = firstSeen.putIfAbsent(owner, joined);
      if (before != null && !before.equals(joined)) {
        changed.add(owner + ": " + before + " -> " + joined);
      }
    });
  }

  /**
   * The rules over every surface of one snapshot (the changed-owner check stays with {@link #check(Map)} on the
   * run's own view: an owner that moves between IPAMs changes address on purpose in some runs).
   */
  void check(List<Surfaces.Entry> entries) {
    check(entries, false);
  }

  /** As above; {@code ledgerRead}: the entries include the ledger at the same revision (the claim rule applies). */
  void check(List<Surfaces.Entry> entries, boolean ledgerRead) {
    oneHolder(entries, e -> e.surface().ownerSurface());
    oneHolder(entries, e -> e.surface() == Surfaces.Surface.HOST_SUBNET_IPS);
    oneHolder(entries, e -> e.surface() == Surfaces.Surface.KEEPALIVED_CONFIG);
    if (ledgerRead) {
      claimedWhileShown(entries);
    }
  }

  /** Among the entries {@code rule} selects, a value shown by two holders is a duplicate (named with surfaces). */
  private void oneHolder(List<Surfaces.Entry> entries, java.util.function.Predicate<Surfaces.Entry> rule) {
    Map<String, Map<String, Set<String>>> byValue = new TreeMap<>();
    for (Surfaces.Entry e : entries) {
      if (rule.test(e)) {
        byValue.computeIfAbsent(e.value(), v -> new TreeMap<>()).computeIfAbsent(e.holder(), h -> new TreeSet<>())
            .add(e.surface().toString());
      }
    }
    byValue.forEach((value, holders) -> {
      if (holders.size() > 1) {
        duplicates.add(value + " on " + holders.entrySet().stream().map(h -> h.getKey() + " " + h.getValue())
            .collect(Collectors.joining(" and ")));
      }
    });
  }

  /**
   * With the ledger read at the same revision: every address an owner shows is held by that owner in the ledger
   * (a claim released, or given to another, while a surface still shows the address breaks the rule).
   */
  private void claimedWhileShown(List<Surfaces.Entry> entries) {
    Map<String, Set<String>> ledger = new HashMap<>();
    entries.stream().filter(e -> e.surface() == Surfaces.Surface.LEDGER)
        .forEach(e -> ledger.computeIfAbsent(e.value(), v -> new TreeSet<>()).add(e.holder()));
    for (Surfaces.Entry e : entries) {
      if (e.surface().ownerSurface() && !ledger.getOrDefault(e.value(), Set.of()).contains(e.holder())) {
        unclaimed.add(e.value() + " shown by " + e.holder() + " (" + e.surface() + ") but held in the ledger by "
            + ledger.getOrDefault(e.value(), Set.of("nobody")));
      }
    }
  }

  /** Addresses an owner showed while the ledger did not hold them for it (only with a ledger read). */
  Set<String> unclaimed() {
    return unclaimed;
  }

  Set<String> duplicates() {
    return duplicates;
  }

  Set<String> changed() {
    return changed;
  }
}
