package org.ipamoperators.keepalived.reloader;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.ipamoperators.testsupport.OrphanGuard;
import org.ipamoperators.testsupport.TestBinaries;
import org.ipamoperators.testsupport.netns.NetworkNamespace;

/**
 * A real keepalived (VRRP only, foreground) in a network namespace with its own {@code TMPDIR}, so each node of a
 * test writes its SIGUSR1 dump to its own file, as each keepalived container of a pod has its own {@code /tmp}.
 * The dump is read through {@code /proc/<pid>/root}, the path the reloader container uses in the pod.
 */
final class DumpingKeepalived implements AutoCloseable {
  private final Process process;
  private final Path pidFile;
  private final Path vrrpPidFile;
  private final Path tmpDir;
  private final Path log;
  private boolean crashed;
  /** A fresh dump at every read: the tests wait for state changes. */
  private final VrrpStates states = new VrrpStates(Duration.ZERO);

  private DumpingKeepalived(Process process, Path pidFile, Path vrrpPidFile, Path tmpDir, Path log) {
    this.process = process;
    this.pidFile = pidFile;
    this.vrrpPidFile = vrrpPidFile;
    this.tmpDir = tmpDir;
    this.log = log;
  }

  static DumpingKeepalived start(NetworkNamespace namespace, Path workDir, String name, String config) {
    TestBinaries binaries = TestBinaries.fromEnvironment();
    try {
      Path dir = Files.createDirectories(workDir.resolve(name)).toAbsolutePath();
      Path tmp = Files.createDirectories(dir.resolve("tmp"));
      Path conf = dir.resolve("keepalived.conf");
      Path pid = dir.resolve("keepalived.pid");
      Path vrrpPid = dir.resolve("vrrp.pid");
      Path log = dir.resolve("keepalived.log");
      Files.writeString(conf, config, StandardCharsets.UTF_8);
      List<String> command = List.of(binaries.ip().toString(), "netns", "exec", namespace.name(), "env",
          "TMPDIR=" + tmp, binaries.keepalived().toString(), "--dont-fork", "--log-console", "--log-detail",
          "--no-syslog", "--vrrp", "--dont-respawn", "--use-file=" + conf, "--pid=" + pid, "--vrrp_pid=" + vrrpPid);
      Process process = new ProcessBuilder(OrphanGuard.guard(command)).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
          .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
      DumpingKeepalived keepalived = new DumpingKeepalived(process, pid, vrrpPid, tmp, log);
      keepalived.awaitRunning(Duration.ofSeconds(20));
      return keepalived;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start keepalived " + name, e);
    }
  }

  /** keepalived's parent, from the pid file it wrote (what the reloader knows in the pod). */
  long pid() {
    return readPid(pidFile).orElseThrow(() -> new IllegalStateException("no pid file yet:\n" + logText()));
  }

  /** The dump as another container of the pod sees it: through this keepalived's {@code /proc/<pid>/root}. */
  Path dumpFile() {
    return Path.of("/proc", Long.toString(pid()), "root").resolve(tmpDir.toString().substring(1))
        .resolve("keepalived.data");
  }

  List<VrrpInstanceState> vrrpStates() {
    return states.read(pid(), dumpFile());
  }

  /** A node crash: SIGKILL to the VRRP process (no goodbye advert), then to the parent. */
  void crash() {
    crashed = true;
    readPid(vrrpPidFile).flatMap(ProcessHandle::of).ifPresent(child -> {
      child.destroyForcibly();
      child.onExit().join();
    });
    readPid(pidFile).flatMap(ProcessHandle::of).ifPresent(parent -> {
      parent.destroyForcibly();
      parent.onExit().join();
    });
    process.destroyForcibly();
  }

  String logText() {
    try {
      return Files.exists(log) ? Files.readString(log) : "(no log)";
    } catch (IOException e) {
      return "(log unreadable: " + e + ")";
    }
  }

  @Override
  public void close() {
    if (crashed) {
      return; // its pid files may name reused pids by now
    }
    Optional<ProcessHandle> child = readPid(vrrpPidFile).flatMap(ProcessHandle::of);
    readPid(pidFile).flatMap(ProcessHandle::of).ifPresent(ProcessHandle::destroy);
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    child.ifPresent(ProcessHandle::destroyForcibly);
  }

  private void awaitRunning(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("keepalived exited with " + process.exitValue() + ":\n" + logText());
      }
      if (readPid(pidFile).isPresent() && readPid(vrrpPidFile).flatMap(ProcessHandle::of)
          .filter(ProcessHandle::isAlive).isPresent()) {
        return;
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    throw new IllegalStateException("keepalived did not start its VRRP process within " + timeout + ":\n"
        + logText());
  }

  private static Optional<Long> readPid(Path file) {
    try {
      String text = Files.exists(file) ? Files.readString(file).strip() : "";
      return text.matches("[0-9]+") ? Optional.of(Long.parseLong(text)) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }
}
