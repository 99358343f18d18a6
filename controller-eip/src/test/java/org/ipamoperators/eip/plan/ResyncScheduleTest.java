package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** {@link ResyncSchedule}: the Eips checked within one interval are next checked together, none later than due. */
class ResyncScheduleTest {
  private static final Duration TWO_MINUTES = Duration.ofMinutes(2);

  @Test
  void eipsCheckedAtDifferentMomentsOfOneIntervalAreNextCheckedAtOneInstant() {
    Instant grid = Instant.ofEpochSecond(1_800_000_000L - 1_800_000_000L % 120);
    Instant early = grid.plusMillis(1_500);
    Instant late = grid.plusSeconds(108);
    Instant next = grid.plus(TWO_MINUTES);

    assertThat(early.plus(ResyncSchedule.untilNext(early, TWO_MINUTES))).isEqualTo(next);
    assertThat(late.plus(ResyncSchedule.untilNext(late, TWO_MINUTES))).isEqualTo(next);
  }

  @Test
  void aCheckOnTheGridIsNextCheckedOneIntervalLater() {
    Instant grid = Instant.ofEpochSecond(1_800_000_000L - 1_800_000_000L % 120);

    assertThat(ResyncSchedule.untilNext(grid, TWO_MINUTES)).isEqualTo(TWO_MINUTES);
  }

  @Test
  void neverLaterThanOneIntervalAndAlwaysOnTheGrid() {
    qt().forAll(longs().between(0, 4_000_000_000_000L), longs().between(1, 3_600_000)).checkAssert((now, ms) -> {
      Duration interval = Duration.ofMillis(ms);
      Duration wait = ResyncSchedule.untilNext(Instant.ofEpochMilli(now), interval);

      assertThat(wait).isPositive().isLessThanOrEqualTo(interval);
      assertThat((now + wait.toMillis()) % ms).isZero();
    });
  }
}
