package org.ipamoperators.keepalived.failover;

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
 * A real keepalived (VRRP only, in the foreground) running one configuration inside a network namespace, with its
 * own pid files and log under a work directory. keepalived runs as a parent that supervises a VRRP child; the
 * child is the one that sends adverts and adds the VIPs. {@link #crash()} SIGKILLs the child first (a dying
 * parent would make the child shut down gracefully and send a priority-0 advert, which is not a crash) and then
 * the parent, which is started with {@code --dont-respawn}. If the JVM dies, {@link OrphanGuard} stops it.
 */
public final class KeepalivedProcess implements AutoCloseable {

  private final String name;
  private final Process process;
  private final Path vrrpPidFile;
  private final Path log;

  private KeepalivedProcess(String name, Process process, Path vrrpPidFile, Path log) {
    this.name = name;
    this.process = process;
    this.vrrpPidFile = vrrpPidFile;
    this.log = log;
  }

  /** Writes {@code config} to {@code workDir/<name>.conf} and starts keepalived on it inside {@code namespace}. */
  public static KeepalivedProcess start(NetworkNamespace namespace, Path workDir, String name, String config) {
    TestBinaries binaries = TestBinaries.fromEnvironment();
    try {
      Files.createDirectories(workDir);
      Path conf = workDir.resolve(name + ".conf").toAbsolutePath();
      Path pid = workDir.resolve(name + ".pid").toAbsolutePath();
      Path vrrpPid = workDir.resolve(name + ".vrrp.pid").toAbsolutePath();
      Path log = workDir.resolve(name + ".log").toAbsolutePath();
      Files.deleteIfExists(pid);
      Files.deleteIfExists(vrrpPid);
      Files.writeString(conf, config, StandardCharsets.UTF_8);
      List<String> command = List.of(binaries.ip().toString(), "netns", "exec", namespace.name(),
          binaries.keepalived().toString(), "--dont-fork", "--log-console", "--log-detail", "--no-syslog", "--vrrp",
          "--dont-respawn", "--use-file=" + conf, "--pid=" + pid, "--vrrp_pid=" + vrrpPid);
      Process process = new ProcessBuilder(OrphanGuard.guard(command))
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
          .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
          .start();
      return new KeepalivedProcess(name, process, vrrpPid, log);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start keepalived " + name, e);
    }
  }

  String name() {
    return name;
  }

  Path log() {
    return log;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The VRRP child, once keepalived has written its pid file. */
  Optional<ProcessHandle> vrrpChild() {
    try {
      if (!Files.exists(vrrpPidFile)) {
        return Optional.empty();
      }
      String text = Files.readString(vrrpPidFile).strip();
      return text.isEmpty() ? Optional.empty() : ProcessHandle.of(Long.parseLong(text));
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** Waits until the VRRP child runs. */
  public void awaitRunning(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("keepalived " + name + " exited with " + process.exitValue() + ":\n"
            + logText());
      }
      if (vrrpChild().filter(ProcessHandle::isAlive).isPresent()) {
        return;
      }
      sleep(10);
    }
    throw new IllegalStateException("keepalived " + name + " did not start its VRRP process within " + timeout
        + ":\n" + logText());
  }

  /** A node crash: SIGKILL to the VRRP child, then to the parent. Returns {@link System#nanoTime()} of the kill. */
  long crash() {
    ProcessHandle child = vrrpChild().orElseThrow(() -> new IllegalStateException("keepalived " + name
        + " has no VRRP process"));
    long killedAt = System.nanoTime();
    child.destroyForcibly();
    process.destroyForcibly();
    awaitExit(child, Duration.ofSeconds(5));
    awaitExit(process.toHandle(), Duration.ofSeconds(5));
    return killedAt;
  }

  /** A clean stop (SIGTERM: keepalived gives up its VIPs), forced after five seconds. */
  void stop() {
    if (!process.isAlive()) {
      vrrpChild().ifPresent(ProcessHandle::destroyForcibly);
      return;
    }
    Optional<ProcessHandle> child = vrrpChild();
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        child.ifPresent(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      child.ifPresent(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
    }
    child.ifPresent(c -> {
      c.destroyForcibly();
      awaitExit(c, Duration.ofSeconds(5));
    });
  }

  public String logText() {
    try {
      return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "(no log)";
    } catch (IOException e) {
      return "(log unreadable: " + e + ")";
    }
  }

  @Override
  public void close() {
    stop();
  }

  private static void awaitExit(ProcessHandle handle, Duration timeout) {
    try {
      handle.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("Process " + handle.pid() + " did not exit within " + timeout, e);
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted", e);
    }
  }
}
