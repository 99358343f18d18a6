package org.ipamoperators.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.ipamoperators.testsupport.Commands;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code java -jar target/ipam.jar demo --node} as a user runs it, in a process of its own: it brings the real node
 * up, loads the images, installs the chart with helm-java, prints what each controller did as a pod, and on SIGINT
 * (Ctrl-C) tears everything down: no node process, container shim, mount, link, cgroup or iptables chain of the node
 * is left, and the machine-wide node lock is free.
 *
 * <p>The demo takes the machine-wide node lock, so it cannot run while this JVM holds the node for other ITs: run
 * it on its own ({@code -Dit.test=DemoOnNodeIT}); in a run with other real-node ITs it is aborted with that reason.
 */
@org.junit.jupiter.api.Order(1) // before the other real-node ITs of this JVM take the node (junit-platform.properties)
class DemoOnNodeIT {
  private static final Path JAR = Path.of("target", "ipam.jar");
  private static final Path STATE = DemoNode.STATE;
  private static final Duration UP = Duration.ofMinutes(15);

  @Test
  void theDemoRunsTheChartOnTheNodeAndCtrlCLeavesNothing(@TempDir Path dir) throws Exception {
    Assumptions.assumeTrue("0".equals(Commands.run("id", "-u").stdout().strip()),
        "the real-node tier needs root (scripts/test.sh runs it as root)");
    Assumptions.assumeTrue(System.getProperty("ipam.image.egressip") != null,
        "no images built: run with -Dipam.image.base=... (scripts/test.sh does as root)");
    // Another process's node: the demo waits for the lock. This JVM's (other ITs of the run): it never comes free.
    Assumptions.assumeFalse(thisJvmHoldsTheNodeLock(),
        "this JVM holds the real node for other ITs: run DemoOnNodeIT on its own (-Dit.test=DemoOnNodeIT)");

    Path log = dir.resolve("demo.log");
    Process demo = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-jar",
        JAR.toString(), "demo", "--node", "--timeout", "600s").redirectErrorStream(true)
        .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
        .start();
    try {
      long deadline = System.nanoTime() + UP.toNanos();
      while (!Files.readString(log).contains("Press Ctrl-C")) {
        assertThat(demo.isAlive()).as("ipam demo --node running; its output:\n%s", Files.readString(log)).isTrue();
        assertThat(System.nanoTime()).as("the demo's result within %s; output:\n%s", UP, Files.readString(log))
            .isLessThan(deadline);
        Thread.sleep(1000);
      }
      String out = Files.readString(log);
      System.out.println(out);
      // The node's steps are shown as they happen, before the node is declared Ready.
      String step = "\\[up +\\d+\\.\\d{3}s\\] ";
      assertThat(out).containsPattern("(?s)" + step + "kube-apiserver ready.*" + step + "node ready.*"
          + "Node node-1 Ready in \\d+ s");
      assertThat(out)
          .containsPattern("egressip +Deployment ipam-egressip Ready \\(pod ipam-egressip-\\S+, image "
              + "ipam-operators/egressip:")
          .containsPattern("vip +Deployment ipam-vip Ready \\(pod \\S+, image ipam-operators/vip:")
          .containsPattern("keepalived +Deployment ipam-keepalived Ready \\(pod \\S+, image ipam-operators/keepalived:")
          .containsPattern("namespace team-a +egress IPs 192\\.0\\.2\\.(4[89]|5\\d|6[0-2]) +EgressIP egressipam-team-a "
              + "\\[192\\.0\\.2\\.")
          .containsPattern("namespace team-b +egress IPs 192\\.0\\.2\\.(4[89]|5\\d|6[0-2]) +EgressIP egressipam-team-b")
          .containsPattern("Service team-a/shop \\(LoadBalancer\\) got \\[192\\.0\\.2\\.1(6[0-9]|7[0-4])\\]")
          .contains("keepalived entered MASTER state", "192.0.2.100/32", "vrrp_instance");
      // While it runs: the node's processes and links exist (what the teardown must remove).
      List<Long> pids = nodePids();
      assertThat(pids).as("the node's processes").hasSizeGreaterThanOrEqualTo(7)
          .allSatisfy(p -> assertThat(ProcessHandle.of(p).map(ProcessHandle::isAlive)).contains(true));
      assertThat(links()).contains("ipamnode0", "cni0", "ipamnode-demo");
      assertThat(nodeMounts()).isNotEmpty();

      // Ctrl-C.
      Commands.run("kill", "-INT", Long.toString(demo.pid())).orThrow();
      assertThat(demo.waitFor(4, TimeUnit.MINUTES)).as("the demo ends after SIGINT").isTrue();
      String end = Files.readString(log);
      assertThat(end).contains("Node down, host restored.");
      assertThat(demo.exitValue()).as("exit status after SIGINT").isEqualTo(130);

      assertThat(pids).as("no node process left")
          .allSatisfy(p -> assertThat(ProcessHandle.of(p).map(ProcessHandle::isAlive).orElse(false)).isFalse());
      assertThat(shims()).as("no containerd shim of the node's socket").isEmpty();
      assertThat(links()).as("no link of the node").doesNotContain("ipamnode0", "cni0", "ipamnode-demo");
      assertThat(nodeMounts()).as("no mount under %s", STATE).isEmpty();
      assertThat(Commands.run("sh", "-c", "ls -d /sys/fs/cgroup/*/ipam-node 2>/dev/null || true").stdout().strip())
          .as("no cgroup of the node").isEmpty();
      assertThat(Commands.run("sh", "-c", "iptables-save | grep -E 'KUBE-|CNI-|cni0' || true").stdout().strip())
          .as("no iptables rule or chain of the node").isEmpty();
      assertThat(lockIsFreeForAnotherProcess() || !Files.exists(STATE.resolve("started")))
          .as("the node lock is free (or another run's node started after ours)").isTrue();
    } finally {
      if (demo.isAlive()) {
        demo.destroyForcibly();
        demo.waitFor(30, TimeUnit.SECONDS);
        // The watchdog (guard.py) tears the node down once the demo is gone.
      }
    }
  }

  @Test
  void withoutTheNodeTierItNamesTheCommandThatPreparesIt(@TempDir Path empty) {
    DemoCommand demo = new DemoCommand();
    demo.environment = Map.of("IPAM_TEST_CACHE", empty.toString());
    StringWriter err = new StringWriter();
    CommandLine cl = new CommandLine(demo);
    cl.setErr(new PrintWriter(err));
    cl.setOut(new PrintWriter(new StringWriter()));
    assertThat(cl.execute("--node", "--exit")).isEqualTo(2);
    if ("0".equals(Commands.run("id", "-u").stdout().strip())) {
      assertThat(err.toString()).contains("needs the real-node tier", "kubelet", "pause.tar",
          "Prepare it once", DemoOnNode.PREPARE);
    } else {
      assertThat(err.toString()).contains("needs root");
    }
  }

  private static boolean thisJvmHoldsTheNodeLock() throws IOException {
    try (FileChannel channel = FileChannel.open(Path.of(DemoNode.LOCK_FILE), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      FileLock lock = channel.tryLock();
      if (lock != null) {
        lock.release();
      }
      return false;
    } catch (OverlappingFileLockException e) {
      return true;
    }
  }

  /** Whether another process could take the node lock now (false when this JVM or another process holds it). */
  private static boolean lockIsFreeForAnotherProcess() throws IOException {
    try (FileChannel channel = FileChannel.open(Path.of(DemoNode.LOCK_FILE), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE)) {
      FileLock lock = channel.tryLock();
      if (lock == null) {
        return false;
      }
      lock.release();
      return true;
    } catch (OverlappingFileLockException e) {
      return false;
    }
  }

  private static List<Long> nodePids() throws IOException {
    List<Long> pids = new ArrayList<>();
    Path dir = STATE.resolve("pids");
    if (Files.isDirectory(dir)) {
      try (Stream<Path> files = Files.list(dir)) {
        for (Path f : files.toList()) {
          pids.add(Long.parseLong(Files.readString(f).strip()));
        }
      }
    }
    return pids;
  }

  private static List<String> links() {
    return Commands.run("ip", "-br", "link").stdout().lines().map(l -> l.split("[\\s@]+")[0]).toList();
  }

  private static List<String> nodeMounts() throws IOException {
    return Files.readAllLines(Path.of("/proc/mounts")).stream().map(l -> l.split(" ")[1])
        .filter(m -> m.startsWith(STATE + "/")).toList();
  }

  private static List<String> shims() {
    String socket = "-address " + STATE + "/run/containerd.sock";
    return ProcessHandle.allProcesses().filter(p -> p.pid() != ProcessHandle.current().pid())
        .map(p -> p.info().commandLine().orElse("")).filter(c -> c.contains(socket)).toList();
  }
}
