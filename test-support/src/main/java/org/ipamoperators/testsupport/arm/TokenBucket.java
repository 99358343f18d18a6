package org.ipamoperators.testsupport.arm;

/** One of the subscription's request budgets (reads or writes), refilled continuously as ARM's are. */
final class TokenBucket {
  double capacity;
  double refill;
  double tokens;
  long last = System.nanoTime();

  TokenBucket(double capacity, double refill) {
    reset(capacity, refill);
  }

  void reset(double c, double r) {
    capacity = c;
    refill = r;
    tokens = c;
    last = System.nanoTime();
  }

  boolean take() {
    long now = System.nanoTime();
    tokens = Math.min(capacity, tokens + (now - last) / 1e9 * refill);
    last = now;
    if (tokens >= 1) {
      tokens -= 1;
      return true;
    }
    return false;
  }

  int retryAfter() {
    return (int) Math.max(1, Math.ceil((1 - tokens) / Math.max(refill, 0.001)));
  }
}
