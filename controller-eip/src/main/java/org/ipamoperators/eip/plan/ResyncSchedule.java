package org.ipamoperators.eip.plan;

import java.time.Duration;
import java.time.Instant;

/**
 * When an Eip with nothing else due is next checked against AWS: at the next whole multiple of the resync interval
 * counted from the epoch, not one interval after its own last check. Every Eip is then checked in one burst per
 * interval, served by one snapshot of the cluster's addresses; checked one interval after their own last checks,
 * the Eips stay spread over however long the pass after a start took, and need one snapshot per snapshot age of
 * that spread (up to four per pass at the defaults). Never later than one interval after now. Pure.
 */
public final class ResyncSchedule {
  private ResyncSchedule() {}

  /** The wait until the next multiple of {@code interval} after {@code now}: more than zero, at most one interval. */
  public static Duration untilNext(Instant now, Duration interval) {
    long every = interval.toMillis();
    if (every <= 0) {
      return interval;
    }
    long at = now.toEpochMilli();
    return Duration.ofMillis(every - Math.floorMod(at, every));
  }
}
