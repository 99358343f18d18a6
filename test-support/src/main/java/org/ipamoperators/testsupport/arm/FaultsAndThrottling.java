package org.ipamoperators.testsupport.arm;

import java.util.ArrayList;
import java.util.List;

/**
 * What answers a request before its resource does: an injected {@link ArmServer.Fault}, or 429 when
 * the subscription's read or write bucket is empty. Callers hold the state's monitor.
 */
final class FaultsAndThrottling {
  private final String subscription;
  private final List<ArmServer.Fault> faults = new ArrayList<>();
  final TokenBucket reads = new TokenBucket(250, 25);
  final TokenBucket writes = new TokenBucket(200, 10);

  FaultsAndThrottling(String subscription) {
    this.subscription = subscription;
  }

  void inject(ArmServer.Fault fault) {
    faults.add(fault);
  }

  boolean allUsed() {
    return faults.stream().allMatch(f -> f.left()[0] <= 0);
  }

  /** Throws the first injected fault that matches (using one of its times), or 429 when over the budget. */
  void check(String method, String rawPath) {
    for (ArmServer.Fault f : faults) {
      if (f.matches(method, rawPath)) {
        f.left()[0]--;
        throw new ArmError(f.status(), f.code(), f.message(), f.detailCode(), f.retryAfter());
      }
    }
    boolean write = !"GET".equals(method);
    TokenBucket bucket = write ? writes : reads;
    if (!bucket.take()) {
      throw new ArmError(429, "SubscriptionRequestsThrottled", "Number of " + (write ? "write" : "read")
          + " requests for subscription '" + subscription + "' exceeded the limit. Please try again after '"
          + bucket.retryAfter() + "' seconds.", null, bucket.retryAfter());
    }
  }
}
