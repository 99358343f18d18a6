package org.ipamoperators.core.audit;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * When the audit runs and how long a claim may stay unpublished before it counts as a leak (a
 * controller claims first and publishes after, so a young unpublished claim is work in progress).
 *
 * @param now the time of the audit
 * @param leakGrace how old an unpublished claim must be to be reported
 */
public record AuditOptions(Instant now, Duration leakGrace) {
  /** The grace a controller gets between its claim and its publication, by default. */
  public static final Duration DEFAULT_LEAK_GRACE = Duration.ofMinutes(5);

  /** Validates the parts; the grace cannot be negative. */
  public AuditOptions {
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(leakGrace, "leakGrace");
    if (leakGrace.isNegative()) {
      throw new IllegalArgumentException("leakGrace must not be negative: " + leakGrace);
    }
  }

  /**
   * Options with the default grace.
   *
   * @param now the time of the audit
   * @return the options
   */
  public static AuditOptions at(Instant now) {
    return new AuditOptions(now, DEFAULT_LEAK_GRACE);
  }
}
