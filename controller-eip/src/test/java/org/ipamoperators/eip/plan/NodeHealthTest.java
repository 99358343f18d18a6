package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.ipamoperators.core.failover.NodeCondition;
import org.junit.jupiter.api.Test;

class NodeHealthTest {
  private static final Duration GRACE = Duration.ofSeconds(10);
  private static final Duration RECOVERY = Duration.ofSeconds(60);
  private final Instant t0 = Instant.parse("2026-11-27T10:00:00Z");

  @Test
  void theGraceCountsFromThisControllersFirstSightingNotFromTheNodesTransitionTime() {
    NodeHealth h = new NodeHealth(GRACE, RECOVERY);
    // Unknown for an hour already (a control-plane outage): first seen now, suspect for the grace.
    var v = h.evaluate(Map.of("n1", false), t0).get("n1");
    assertThat(v.condition()).isEqualTo(NodeCondition.SUSPECT);
    assertThat(v.reviewAt()).isEqualTo(t0.plus(GRACE));
    assertThat(h.evaluate(Map.of("n1", false), t0.plus(GRACE).minusMillis(1)).get("n1").condition())
        .isEqualTo(NodeCondition.SUSPECT);
    assertThat(h.evaluate(Map.of("n1", false), t0.plus(GRACE)).get("n1").condition())
        .isEqualTo(NodeCondition.FAILED);
  }

  @Test
  void aFailedNodeBackWaitsOutRecoveryAndFlappingFailsItAtOnce() {
    NodeHealth h = new NodeHealth(GRACE, RECOVERY);
    h.evaluate(Map.of("n1", false), t0);
    h.evaluate(Map.of("n1", false), t0.plusSeconds(20));
    Instant back = t0.plusSeconds(30);
    var v = h.evaluate(Map.of("n1", true), back).get("n1");
    assertThat(v.condition()).isEqualTo(NodeCondition.RECOVERING);
    assertThat(v.reviewAt()).isEqualTo(back.plus(RECOVERY));
    assertThat(h.evaluate(Map.of("n1", false), back.plusSeconds(5)).get("n1").condition())
        .isEqualTo(NodeCondition.FAILED);
    h.evaluate(Map.of("n1", true), back.plusSeconds(6));
    assertThat(h.evaluate(Map.of("n1", true), back.plusSeconds(6).plus(RECOVERY)).get("n1").condition())
        .isEqualTo(NodeCondition.HEALTHY);
  }

  @Test
  void aBlipShorterThanTheGraceLeavesTheNodeHealthyAndForgottenNodesStartAfresh() {
    NodeHealth h = new NodeHealth(GRACE, RECOVERY);
    assertThat(h.evaluate(Map.of("n1", true), t0).get("n1").condition()).isEqualTo(NodeCondition.HEALTHY);
    h.evaluate(Map.of("n1", false), t0.plusSeconds(1));
    assertThat(h.evaluate(Map.of("n1", true), t0.plusSeconds(5)).get("n1").condition())
        .isEqualTo(NodeCondition.HEALTHY);
    h.evaluate(Map.of("n1", false), t0.plusSeconds(6));
    h.evaluate(Map.of("n1", false), t0.plusSeconds(30));
    h.evaluate(Map.of(), t0.plusSeconds(31));
    assertThat(h.evaluate(Map.of("n1", true), t0.plusSeconds(32)).get("n1").condition())
        .isEqualTo(NodeCondition.HEALTHY);
  }
}
