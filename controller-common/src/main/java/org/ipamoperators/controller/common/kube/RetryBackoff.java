package org.ipamoperators.controller.common.kube;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When to try again after a pass whose writes were refused: {@code first}, then twice as long each
 * time up to {@code max}, per object, back to the start after a pass that went through. Unlike
 * java-operator-sdk's retry it never gives up: a refused write keeps its claim and must be tried
 * until it goes through. A timing hint only (lost on a restart, which starts again at {@code first}).
 */
public final class RetryBackoff {
  private final Duration first;
  private final Duration max;
  private final Map<String, Integer> failures = new ConcurrentHashMap<>();

  public RetryBackoff(Duration first, Duration max) {
    this.first = first;
    this.max = max;
  }

  /** The delay before the next attempt for {@code key}, counting this failure. */
  public Duration next(String key) {
    int n = failures.merge(key, 1, Integer::sum);
    long millis = first.toMillis() << Math.min(n - 1, 20);
    return Duration.ofMillis(Math.min(millis, max.toMillis()));
  }

  public void reset(String key) {
    failures.remove(key);
  }
}
