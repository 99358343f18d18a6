package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.junit.jupiter.api.Test;

/** The bad-input corpus's Eip findings: what admission lets through and no pass can serve. */
class SpecCheckTest {
  private static EipSpec v1(String podName) {
    return new EipSpec(podName, null, null, null);
  }

  @Test
  void anEmptyV1PodNameIsAnInvalidSpecNotAnUpgradeTheApiServerRefuses() {
    assertThat(SpecCheck.problem(v1(""))).hasValueSatisfying(m -> assertThat(m).contains("spec.podName (v1) is empty"));
    assertThat(SpecCheck.problem(v1("  "))).isPresent();
    assertThat(SpecCheck.problem(v1("db-0"))).isEmpty();
  }

  @Test
  void missingSpecsAndNamesNoPodCanHaveAreReported() {
    assertThat(SpecCheck.problem(null)).hasValueSatisfying(m -> assertThat(m).contains("spec is missing"));
    assertThat(SpecCheck.problem(new EipSpec(null, null, null, null))).isPresent();
    assertThat(SpecCheck.problem(EipSpec.of(EipSelector.pod("Db_0")))).isPresent();
    assertThat(SpecCheck.problem(EipSpec.of(EipSelector.pod("дб-0")))).isPresent();
    assertThat(SpecCheck.problem(EipSpec.of(EipSelector.pod("a".repeat(300)))))
        .hasValueSatisfying(m -> assertThat(m).contains("(300 characters)").hasSizeLessThan(300));
    assertThat(SpecCheck.problem(EipSpec.of(new EipSelector(null, null)))).isPresent();
    assertThat(SpecCheck.problem(EipSpec.of(EipSelector.node(Map.of())))).isPresent();
  }

  @Test
  void goodSpecsPass() {
    assertThat(SpecCheck.problem(EipSpec.of(EipSelector.pod("db-0.shard-1")))).isEmpty();
    assertThat(SpecCheck.problem(EipSpec.of(EipSelector.node(Map.of("role", "egress"))))).isEmpty();
  }
}
