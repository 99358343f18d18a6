package org.ipamoperators.keepalived.reloader;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The config-reloader of a keepalived pod: looks at the node's configuration in the mounted ConfigMap, resolves
 * {@code interfaceFromIP}, checks the result with {@code keepalived --config-test}, and only when it differs from
 * what keepalived runs, writes it (atomically) and sends keepalived SIGHUP. An unchanged ConfigMap, or one whose
 * change does not touch this node, never reloads keepalived; a configuration keepalived refuses is never written
 * (keepalived keeps the one it has, the refusal is logged and counted).
 */
public final class KeepalivedReloader {
  private static final Logger LOG = LoggerFactory.getLogger(KeepalivedReloader.class);
  private static final java.time.Duration CONFIG_TEST_TIMEOUT = java.time.Duration.ofSeconds(60);
  private static final java.time.Duration ROUTE_TIMEOUT = java.time.Duration.ofSeconds(10);

  /** What one look at the source did. */
  public enum Outcome { UNCHANGED, WRITTEN, RELOADED, INVALID, SOURCE_MISSING, INTERFACE_UNRESOLVED }

  private final ReloaderOptions options;
  private final VrrpStates vrrpStates;
  private final AtomicLong reloads = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();
  private String lastRefused;

  public KeepalivedReloader(ReloaderOptions options) {
    this.options = options;
    this.vrrpStates = new VrrpStates(options.statesInterval());
  }

  /**
   * The VRRP instances of the pid file's keepalived, from a dump asked for at most once per {@code statesInterval};
   * none without a pid file or a running keepalived.
   */
  public List<VrrpInstanceState> vrrpStates() {
    return options.pidFile().flatMap(KeepalivedReloader::pid)
        .map(pid -> vrrpStates.read(pid, VrrpStates.dumpFileOf(pid))).orElse(List.of());
  }

  public long reloads() {
    return reloads.get();
  }

  public long refused() {
    return refused.get();
  }

  /** Whether the keepalived of the pid file runs. */
  public boolean keepalivedUp() {
    return options.pidFile().flatMap(KeepalivedReloader::pid).flatMap(ProcessHandle::of)
        .filter(ProcessHandle::isAlive).isPresent();
  }

  /** The configuration keepalived runs, as SHA-256 hex, if written yet. */
  public Optional<String> runningConfigSha256() {
    return read(options.target()).map(text -> {
      try {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
            .digest(text.getBytes(StandardCharsets.UTF_8)));
      } catch (java.security.NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    });
  }

  /** Runs until {@code stop} says so (or once with {@code --once}); returns the last outcome. */
  public Outcome run(BooleanSupplier stop) throws InterruptedException {
    Outcome last = syncOnce();
    if (options.once()) {
      return last;
    }
    while (!stop.getAsBoolean()) {
      Thread.sleep(options.interval().toMillis());
      last = syncOnce();
    }
    return last;
  }

  /** One look at the source. */
  public synchronized Outcome syncOnce() {
    Optional<String> source = read(options.source());
    if (source.isEmpty()) {
      LOG.warn("no configuration for this node at {} yet", options.source());
      return Outcome.SOURCE_MISSING;
    }
    String wanted = source.get();
    if (options.interfaceFromIp().isPresent()) {
      Optional<String> iface = resolveInterface(options.interfaceFromIp().get());
      if (iface.isEmpty()) {
        LOG.error("no route to {} (interfaceFromIP) on this node: configuration left as it is",
            options.interfaceFromIp().get());
        return Outcome.INTERFACE_UNRESOLVED;
      }
      wanted = InterfaceSubstitution.apply(wanted, options.interfacePlaceholder(), iface.get());
    }
    if (read(options.target()).filter(wanted::equals).isPresent()) {
      return Outcome.UNCHANGED;
    }
    if (wanted.equals(lastRefused)) {
      return Outcome.INVALID; // refused before; said so then
    }
    Path candidate = options.target().resolveSibling(options.target().getFileName() + ".new");
    write(candidate, wanted);
    CheckResult check = check(candidate);
    if (!check.valid()) {
      refused.incrementAndGet();
      lastRefused = wanted;
      LOG.error("keepalived refuses the new configuration (exit {}); keeping the running one:\n{}", check.exitCode(),
          check.output());
      deleteQuietly(candidate);
      return Outcome.INVALID;
    }
    move(candidate, options.target());
    Optional<Long> pid = options.pidFile().flatMap(KeepalivedReloader::pid);
    if (pid.isEmpty() || ProcessHandle.of(pid.get()).filter(ProcessHandle::isAlive).isEmpty()) {
      LOG.info("configuration written to {}; keepalived not running yet, nothing to reload", options.target());
      return Outcome.WRITTEN;
    }
    signalHup(pid.get());
    reloads.incrementAndGet();
    LOG.info("configuration changed: keepalived (pid {}) reloaded", pid.get());
    return Outcome.RELOADED;
  }

  record CheckResult(int exitCode, String output) {
    boolean valid() {
      return exitCode == 0;
    }
  }

  private CheckResult check(Path file) {
    return run(command(options.keepalived(), "--config-test", "--all-config", "--use-file=" + file.toAbsolutePath()),
        CONFIG_TEST_TIMEOUT);
  }

  private Optional<String> resolveInterface(String address) {
    CheckResult r = run(command("ip", "-o", "route", "get", address), ROUTE_TIMEOUT);
    return r.valid() ? InterfaceSubstitution.deviceOf(r.output()) : Optional.empty();
  }

  private List<String> command(String... parts) {
    List<String> c = new ArrayList<>(options.commandPrefix());
    c.addAll(List.of(parts));
    return c;
  }

  private static CheckResult run(List<String> command, java.time.Duration timeout) {
    try {
      Subprocess.Outcome o = Subprocess.run(command, timeout);
      return new CheckResult(o.exit(), o.output());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new CheckResult(-1, "interrupted");
    }
  }

  private static void signalHup(long pid) {
    KeepalivedSignal.send("HUP", pid);
  }

  private static Optional<Long> pid(Path file) {
    return read(file).map(String::strip).filter(s -> s.matches("[0-9]+")).map(Long::parseLong);
  }

  private static Optional<String> read(Path file) {
    try {
      return Files.isRegularFile(file) ? Optional.of(Files.readString(file, StandardCharsets.UTF_8)) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static void write(Path file, String text) {
    try {
      Files.writeString(file, text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }

  private static void move(Path from, Path to) {
    try {
      Files.move(from, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      try {
        Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
      } catch (IOException io) {
        throw new UncheckedIOException("cannot write " + to, io);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + to, e);
    }
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // a leftover candidate is overwritten next time
    }
  }
}
