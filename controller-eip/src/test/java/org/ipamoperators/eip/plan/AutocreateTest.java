package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class AutocreateTest {
  private static final Autocreate.Named OWN = new Autocreate.Named(false, "db-0", "pod db-0");

  @Test
  void createsOnlyForAPodAskingWhenNoEipHasItsNameOrSelectsIt() {
    assertThat(Autocreate.of("db-0", true, null, List.of())).isEqualTo(new Autocreate.Create());
    assertThat(Autocreate.of("db-0", false, null, List.of())).isEqualTo(new Autocreate.Nothing());
    assertThat(Autocreate.of("db-0", true, OWN, List.of())).isEqualTo(new Autocreate.Nothing());
    assertThat(Autocreate.of("db-0", true, new Autocreate.Named(true, "db-0", "pod db-0"), List.of()))
        .isEqualTo(new Autocreate.WaitForDeletion());
  }

  @Test
  void anEipOfItsNameSelectingSomethingElseOrAManualOneIsAConflict() {
    assertThat(Autocreate.of("db-0", true, new Autocreate.Named(false, null, "nodes {role=edge}"), List.of()))
        .isEqualTo(new Autocreate.Conflict("Eip db-0 exists and selects nodes {role=edge}: no Eip is autocreated"
            + " for this pod"));
    assertThat(Autocreate.of("db-0", true, null, List.of("web", "api"))).isEqualTo(new Autocreate.Conflict(
        "Eip web, api already selects this pod: no Eip is autocreated (the manual one wins)"));
  }

  @Test
  void theEipsSelectingThePodAreReadOnlyWhenOneMayBeCreated() {
    assertThat(Autocreate.needsManual(true, null)).isTrue();
    assertThat(Autocreate.needsManual(false, null)).isFalse();
    assertThat(Autocreate.needsManual(true, OWN)).isFalse();
  }
}
