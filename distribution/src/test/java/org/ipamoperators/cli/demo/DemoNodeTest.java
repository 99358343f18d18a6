package org.ipamoperators.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How {@code ipam demo --node} runs the node's scripts: steps shown while they run, a hung script stopped. */
class DemoNodeTest {
  @TempDir
  Path dir;

  @Test
  void eachStepAScriptLogsIsShownWhileItStillRuns() throws Exception {
    DemoNode.Layout layout = layout("""
        echo "[up   0.012s] etcd ready"
        echo "plain output, not a step"
        echo "[up   0.420s] kube-apiserver ready"
        read -t 30 _ < "$1"   # until the test says go on
        echo "[up  14.000s] up: export KUBECONFIG=x"
        """);
    Path fifo = dir.resolve("go");
    new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
    List<String> steps = new CopyOnWriteArrayList<>();
    CompletableFuture<String> run = CompletableFuture.supplyAsync(() -> {
      try {
        return DemoNode.run(layout, Duration.ofSeconds(60), "step.sh", steps::add, fifo.toString());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    // The first two steps arrive while the script waits for the test: shown as they happen, not at its end.
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> steps.size() == 2);
    assertThat(run).isNotDone();
    assertThat(steps).containsExactly("[up   0.012s] etcd ready", "[up   0.420s] kube-apiserver ready");
    Files.writeString(fifo, "go\n");
    assertThat(run.get(20, TimeUnit.SECONDS)).contains("plain output, not a step");
    assertThat(steps).hasSize(3).last().isEqualTo("[up  14.000s] up: export KUBECONFIG=x");
  }

  @Test
  void aScriptStillRunningAfterItsTimeoutIsStoppedAndNamed() throws Exception {
    DemoNode.Layout layout = layout("""
        echo "[up   0.010s] etcd ready"
        sleep 120
        """);
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> DemoNode.run(layout, Duration.ofSeconds(2), "step.sh", s -> { }))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("step.sh did not finish within PT2S").hasMessageContaining("etcd ready");
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(60));
  }

  @Test
  void aFailedScriptIsAFailureWithItsOutput() throws Exception {
    DemoNode.Layout layout = layout("""
        echo "kubelet missing" >&2
        exit 3
        """);
    assertThatThrownBy(() -> DemoNode.run(layout, Duration.ofSeconds(20), "step.sh", s -> { }))
        .hasMessage("step.sh failed (exit 3):\nkubelet missing");
  }

  private DemoNode.Layout layout(String script) throws Exception {
    Path scripts = Files.createDirectories(dir.resolve("scripts"));
    Files.writeString(scripts.resolve("step.sh"), script);
    return new DemoNode.Layout(scripts, dir.resolve("bin"), dir.resolve("images"));
  }
}
