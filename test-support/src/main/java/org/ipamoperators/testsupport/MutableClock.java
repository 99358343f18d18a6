package org.ipamoperators.testsupport;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A UTC clock that a test moves by hand, so time-based behaviour is checked without sleeping. */
public final class MutableClock extends Clock {
  private volatile Instant now;

  /** A clock that shows {@code start} until moved. */
  public MutableClock(Instant start) {
    this.now = start;
  }

  /** Moves the clock forward (or back, for a negative duration). */
  public void advance(Duration by) {
    now = now.plus(by);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  @Override
  public Instant instant() {
    return now;
  }
}
