package org.ipamoperators.testsupport.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The wrapper with {@code sleep} as its program: restarts on request only, and never leaves the child behind. */
class RestartableProcessTest {

  @Test
  void startsTheProgramAgainOnlyWhenARestartWasRequested(@TempDir Path dir) throws Exception {
    Process wrapper = start(dir);
    long first = awaitPid(dir, 0);
    RestartableProcess.requestRestart(dir, "sleeper");
    ProcessHandle.of(first).orElseThrow().destroy();
    long second = awaitPid(dir, first);
    assertThat(second).isNotEqualTo(first);
    assertThat(wrapper.isAlive()).isTrue();
    assertThat(Files.exists(dir.resolve("sleeper.restart"))).as("the request is used up").isFalse();

    // Not requested: the program's end is the wrapper's end, with its exit code (143 for SIGTERM).
    ProcessHandle.of(second).orElseThrow().destroy();
    assertThat(wrapper.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(wrapper.exitValue()).isEqualTo(143);
  }

  @Test
  void aKilledWrapperTakesItsChildWithIt(@TempDir Path dir) throws Exception {
    Process wrapper = start(dir);
    long child = awaitPid(dir, 0);
    wrapper.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> ProcessHandle.of(child).map(h -> !h.isAlive()).orElse(true));
  }

  private static Process start(Path dir) throws Exception {
    Path script = dir.resolve("wrapper.sh");
    Files.writeString(script, "#!/bin/sh\n"
        + RestartableProcess.scriptBody(ProcessHandle.current().pid(), dir, "sleeper", "sleep"));
    return new ProcessBuilder("sh", script.toString(), "300").start();
  }

  private static long awaitPid(Path dir, long other) {
    long[] pid = {0};
    await().atMost(Duration.ofSeconds(10)).until(() -> {
      if (!Files.exists(dir.resolve("sleeper.pid"))) {
        return false;
      }
      String text = Files.readString(dir.resolve("sleeper.pid")).trim();
      if (text.isEmpty()) {
        return false;
      }
      pid[0] = Long.parseLong(text);
      return pid[0] != other && ProcessHandle.of(pid[0]).isPresent();
    });
    return pid[0];
  }
}
