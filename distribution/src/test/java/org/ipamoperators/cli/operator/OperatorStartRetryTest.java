package org.ipamoperators.cli.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class OperatorStartRetryTest {
  @Test
  void startUpChecksWaitLongerAfterEachFailureUpToEightSeconds() {
    long[] waits = IntStream.rangeClosed(1, 5).mapToLong(StartupChecks::startRetryDelayMillis).toArray();
    assertThat(waits).containsExactly(1_000, 2_000, 4_000, 8_000, 8_000);
    assertThat(StartupChecks.startRetryDelayMillis(20)).isEqualTo(8_000);
  }
}
