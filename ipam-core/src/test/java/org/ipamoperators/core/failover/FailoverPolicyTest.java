package org.ipamoperators.core.failover;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class FailoverPolicyTest {
  private static final Instant T0 = Instant.parse("2026-05-01T10:00:00Z");
  private static final FailoverPolicy POLICY = new FailoverPolicy(Duration.ofSeconds(30), Duration.ofMinutes(5));

  private static HealthObservation obs(String node, int secondsAfterT0, boolean ready) {
    return new HealthObservation(node, T0.plusSeconds(secondsAfterT0), ready);
  }

  private static NodeVerdict verdict(List<HealthObservation> history, int secondsAfterT0) {
    return POLICY.evaluate(history, T0.plusSeconds(secondsAfterT0)).get("n1");
  }

  @Test
  void aBlipShorterThanTheGraceMovesNothing() {
    List<HealthObservation> h = List.of(obs("n1", 0, true), obs("n1", 10, false), obs("n1", 25, true));
    assertThat(verdict(h, 100).condition()).isEqualTo(NodeCondition.HEALTHY);
    NodeVerdict during = verdict(h.subList(0, 2), 20);
    assertThat(during.condition()).isEqualTo(NodeCondition.SUSPECT);
    assertThat(during.failed()).isFalse();
    assertThat(during.eligible()).isFalse();
    assertThat(during.reviewAt()).isEqualTo(T0.plusSeconds(40));
  }

  @Test
  void notReadyPastTheGraceFails() {
    List<HealthObservation> h = List.of(obs("n1", 0, false));
    assertThat(verdict(h, 29).condition()).isEqualTo(NodeCondition.SUSPECT);
    NodeVerdict v = verdict(h, 30);
    assertThat(v.condition()).isEqualTo(NodeCondition.FAILED);
    assertThat(v.since()).isEqualTo(T0.plusSeconds(30));
    assertThat(v.reviewAt()).isNull();
  }

  @Test
  void aRecoveredNodeCountsAsFailedUntilReadyForTheWholeWindow() {
    List<HealthObservation> h = List.of(obs("n1", 0, false), obs("n1", 60, true));
    NodeVerdict recovering = verdict(h, 120);
    assertThat(recovering.condition()).isEqualTo(NodeCondition.RECOVERING);
    assertThat(recovering.failed()).isTrue();
    assertThat(recovering.reviewAt()).isEqualTo(T0.plusSeconds(360));
    assertThat(verdict(h, 360).condition()).isEqualTo(NodeCondition.HEALTHY);
  }

  @Test
  void aFlappingNodeFailsOncePerWindow() {
    // ready/not-ready every 40 s for an hour: the node must fail once and then stay failed
    List<HealthObservation> h = new ArrayList<>();
    for (int t = 0; t < 3600; t += 40) {
      h.add(obs("n1", t, (t / 40) % 2 == 1));
    }
    int failures = 0;
    boolean wasFailed = false;
    for (int t = 0; t < 3600; t += 5) {
      boolean failed = verdict(h, t).failed();
      if (failed && !wasFailed) {
        failures++;
      }
      wasFailed = failed;
    }
    assertThat(failures).isEqualTo(1);
  }

  @Test
  void failsAtMostOncePerGracePlusRecoveryWindowWhateverTheHistory() {
    long seed = 99;
    for (int run = 0; run < 200; run++, seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      List<HealthObservation> h = new ArrayList<>();
      int t = 0;
      while (t < 7200) {
        h.add(obs("n1", t, r.nextBoolean()));
        t += 1 + r.nextInt(400);
      }
      List<Integer> failTimes = new ArrayList<>();
      boolean wasFailed = false;
      for (int s = 0; s < 7200; s += 1) {
        boolean failed = verdict(h, s).failed();
        if (failed && !wasFailed) {
          failTimes.add(s);
        }
        wasFailed = failed;
      }
      for (int i = 1; i < failTimes.size(); i++) {
        assertThat(failTimes.get(i) - failTimes.get(i - 1)).as("seed %d", seed)
            .isGreaterThanOrEqualTo(330);
      }
    }
  }

  @Test
  void nodesAreJudgedIndependentlyAndObservationOrderDoesNotMatter() {
    List<HealthObservation> h = new ArrayList<>(List.of(obs("n2", 50, true), obs("n1", 0, false),
        obs("n2", 0, false), obs("n1", 10, true)));
    var a = POLICY.evaluate(h, T0.plusSeconds(100));
    java.util.Collections.reverse(h);
    assertThat(POLICY.evaluate(h, T0.plusSeconds(100))).isEqualTo(a);
    assertThat(a.get("n1").condition()).isEqualTo(NodeCondition.HEALTHY);
    assertThat(a.get("n2").condition()).isEqualTo(NodeCondition.RECOVERING);
  }
}
