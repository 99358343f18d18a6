package org.ipamoperators.egressip;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When to try again after a pass whose writes were refused: 2 s, then twice as long each time up to
 * 30 s, per IPAM, back to the start after a pass that went through. A timing hint only (lost on a
 * restart, which starts again at 2 s).
 */
final class RetryBackoff {
  private final Duration first;
  private final Duration max;
  private final Map<String, Integer> failures = new ConcurrentHashMap<>();

  RetryBackoff(Duration first, Duration max) {
    this.first = first;
    this.max = max;
  }

  /** The delay before the next attempt for {@code key}, counting this failure. */
  Duration next(String key) {
    int n = failures.merge(key, 1, Integer::sum);
    long millis = first.toMillis() << Math.min(n - 1, 20);
    return Duration.ofMillis(Math.min(millis, max.toMillis()));
  }

  void reset(String key) {
    failures.remove(key);
  }
}
