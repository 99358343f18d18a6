package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.ipamoperators.cli.audit.ClusterFacts;
import org.junit.jupiter.api.Test;

class AuditCommandTest {
  /** {@code --controllers} offers exactly the controllers the audit reads (picocli needs them as an enum). */
  @Test
  void theControllersAnAuditCanBeLimitedToAreTheOnesItReads() {
    assertThat(Arrays.stream(AuditCommand.Controller.values()).map(Enum::name))
        .containsExactlyInAnyOrderElementsOf(ClusterFacts.ALL);
  }
}
