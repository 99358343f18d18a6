package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PodPlanTest {
  @Test
  void onlyAScheduledManagedLivePodWithAnIpGetsTheAddress() {
    assertThat(PodDecision.of("db-0", Optional.empty())).isInstanceOfSatisfying(PodDecision.Detach.class,
        d -> assertThat(d.reason()).isEqualTo("PodNotFound"));
    assertThat(reason(new PodView("db-0", false, false, "n1", "10.0.0.5"))).isEqualTo("PodNotManaged");
    assertThat(reason(new PodView("db-0", true, true, "n1", "10.0.0.5"))).isEqualTo("PodTerminating");
    assertThat(reason(new PodView("db-0", true, false, null, null))).isEqualTo("PodPending");
    assertThat(reason(new PodView("db-0", true, false, "n1", null))).isEqualTo("PodHasNoIP");
    assertThat(PodDecision.of("db-0", Optional.of(new PodView("db-0", true, false, "n1", "10.0.0.5"))))
        .isEqualTo(new PodDecision.Associate("db-0", "10.0.0.5", "n1"));
  }

  private static String reason(PodView p) {
    return ((PodDecision.Detach) PodDecision.of(p.name(), Optional.of(p))).reason();
  }

  @Test
  void aManualEipWinsOverTheAutocreatedOneThenTheOldestThenTheName() {
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    PodClaimant auto = new PodClaimant("db-0", true, t0);
    PodClaimant manualNew = new PodClaimant("z-manual", false, t0.plusSeconds(60));
    PodClaimant manualOld = new PodClaimant("y-manual", false, t0.plusSeconds(30));
    PodClaimant manualOldToo = new PodClaimant("a-manual", false, t0.plusSeconds(30));
    assertThat(PodClaimant.winner(List.of(auto, manualNew))).contains(manualNew);
    assertThat(PodClaimant.winner(List.of(manualNew, auto, manualOld))).contains(manualOld);
    assertThat(PodClaimant.winner(List.of(manualOld, manualOldToo, auto))).contains(manualOldToo);
  }
}
