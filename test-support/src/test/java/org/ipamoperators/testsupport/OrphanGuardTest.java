package org.ipamoperators.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class OrphanGuardTest {

  @Test
  void stopsTheProgramWhenItsOwnerDies() throws Exception {
    Process owner = new ProcessBuilder("sleep", "60").start();
    Process guarded = new ProcessBuilder("/bin/sh", "-c", OrphanGuard.scriptBody(owner.pid(), "sleep"), "sleep", "60")
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try {
      assertThat(guarded.waitFor(1, TimeUnit.SECONDS)).as("runs while its owner lives").isFalse();

      owner.destroy();

      assertThat(guarded.waitFor(10, TimeUnit.SECONDS)).as("stopped after its owner died").isTrue();
    } finally {
      owner.destroyForcibly();
      guarded.destroyForcibly();
    }
  }

  @Test
  void passesArgumentsThroughUnchanged() {
    CommandResult result = Commands.run(OrphanGuard.guard(List.of("printf", "%s|", "a b", "it's", "$HOME")));

    assertThat(result.stdout()).isEqualTo("a b|it's|$HOME|");
  }
}
