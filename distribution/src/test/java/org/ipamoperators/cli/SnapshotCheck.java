package org.ipamoperators.cli;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the reliability runs look for in every snapshot of what the cluster shows (owner to its
 * addresses): an address shown by two owners, and an owner whose addresses changed since first seen.
 * Thread-safe: a watcher thread checks while the test thread does the final check.
 */
final class SnapshotCheck {
  private final Map<String, String> firstSeen = new ConcurrentHashMap<>();
  private final Set<String> duplicates = ConcurrentHashMap.newKeySet();
  private final Set<String> changed = ConcurrentHashMap.newKeySet();

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

  Set<String> duplicates() {
    return duplicates;
  }

  Set<String> changed() {
    return changed;
  }
}
