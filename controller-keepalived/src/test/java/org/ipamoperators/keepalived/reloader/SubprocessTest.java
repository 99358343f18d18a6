package org.ipamoperators.keepalived.reloader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A hung subprocess is killed at its time limit; reading its output first would wait for it forever. */
class SubprocessTest {

  @Test
  void aHungCommandThatKeepsItsOutputOpenTimesOut() {
    // Prints, then hangs with stdout open: readAllBytes() before waitFor() would block for the whole sleep.
    Subprocess.Outcome o = assertTimeoutPreemptively(Duration.ofSeconds(10),
        () -> Subprocess.run(List.of("sh", "-c", "echo started; exec sleep 60"), Duration.ofMillis(300)));
    assertThat(o.timedOut()).isTrue();
    assertThat(o.exit()).isEqualTo(-1);
    assertThat(o.output()).startsWith("started\n").contains("timed out after 300 ms");
  }

  @Test
  void aChildLeftHoldingTheOutputDoesNotBlockEither() {
    Subprocess.Outcome o = assertTimeoutPreemptively(Duration.ofSeconds(10),
        () -> Subprocess.run(List.of("sh", "-c", "sleep 60 & echo done"), Duration.ofSeconds(5)));
    assertThat(o.timedOut()).isFalse();
    assertThat(o.exit()).isZero();
    assertThat(o.output()).contains("done");
  }

  @Test
  void aQuickCommandGivesItsExitCodeAndOutput() throws Exception {
    Subprocess.Outcome o = Subprocess.run(List.of("sh", "-c", "echo out; echo err >&2; exit 3"), Duration.ofSeconds(5));
    assertThat(o.exit()).isEqualTo(3);
    assertThat(o.output()).contains("out", "err");
    assertThat(Subprocess.run(List.of("/nonexistent/binary"), Duration.ofSeconds(1)).output()).contains("cannot run");
  }
}
