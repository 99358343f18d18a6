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

  /** What one look at the source did. */
  public enum Outcome { UNCHANGED, WRITTEN, RELOADED, INVALID, SOURCE_MISSING, INTERFACE_UNRESOLVED }

  private final ReloaderOptions options;
  private final AtomicLong reloads = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();
  private String lastRefused;

  public KeepalivedReloader(ReloaderOptions options) {
    this.options = options;
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

  /** Prometheus text: keepalived_up, the reload and refusal counters, the running configuration's digest. */
  public String metrics() {
    StringBuilder b = new StringBuilder();
    b.append("# HELP keepalived_up Whether keepalived runs (the process of its pid file is alive).\n")
        .append("# TYPE keepalived_up gauge\n")
        .append("keepalived_up ").append(keepalivedUp() ? 1 : 0).append('\n')
        .append("# HELP keepalived_reloader_reloads_total Configuration changes applied with SIGHUP.\n")
        .append("# TYPE keepalived_reloader_reloads_total counter\n")
        .append("keepalived_reloader_reloads_total ").append(reloads()).append('\n')
        .append("# HELP keepalived_reloader_refused_total Configurations keepalived --config-test refused.\n")
        .append("# TYPE keepalived_reloader_refused_total counter\n")
        .append("keepalived_reloader_refused_total ").append(refused()).append('\n');
    runningConfigSha256().ifPresent(sha -> b
        .append("# HELP keepalived_reloader_config_info The configuration keepalived runs.\n")
        .append("# TYPE keepalived_reloader_config_info gauge\n")
        .append("keepalived_reloader_config_info{sha256=\"").append(sha).append("\"} 1\n"));
    return b.toString();
  }

  /** Serves {@link #metrics()} at {@code /metrics} on {@code port} (0: any free port); stop it when done. */
  public com.sun.net.httpserver.HttpServer serveMetrics(java.net.InetSocketAddress address) throws IOException {
    com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(address, 0);
    server.createContext("/metrics", exchange -> {
      byte[] body = metrics().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
      exchange.sendResponseHeaders(200, body.length);
      try (var out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    server.start();
    return server;
  }

  /**
   * The {@code ipam keepalived-reloader} command: parses the DaemonSet's arguments, serves the metrics when
   * {@code --metrics-port} is set, and runs until the process is stopped ({@code --once}: one look). Exit status 0,
   * or 1 when {@code --once} could not write a configuration.
   */
  public static int runCommand(List<String> args) throws IOException, InterruptedException {
    ReloaderOptions options = ReloaderOptions.parse(args);
    KeepalivedReloader reloader = new KeepalivedReloader(options);
    if (options.metricsPort() > 0 && !options.once()) {
      reloader.serveMetrics(new java.net.InetSocketAddress(options.metricsPort()));
    }
    Outcome last = reloader.run(() -> Thread.currentThread().isInterrupted());
    return options.once() && last != Outcome.WRITTEN && last != Outcome.UNCHANGED && last != Outcome.RELOADED ? 1 : 0;
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
    return run(command(options.keepalived(), "--config-test", "--all-config", "--use-file=" + file.toAbsolutePath()));
  }

  private Optional<String> resolveInterface(String address) {
    CheckResult r = run(command("ip", "-o", "route", "get", address));
    return r.valid() ? InterfaceSubstitution.deviceOf(r.output()) : Optional.empty();
  }

  private List<String> command(String... parts) {
    List<String> c = new ArrayList<>(options.commandPrefix());
    c.addAll(List.of(parts));
    return c;
  }

  private static CheckResult run(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new CheckResult(-1, out + "\n(timed out)");
      }
      return new CheckResult(p.exitValue(), out);
    } catch (IOException e) {
      return new CheckResult(-1, "cannot run " + command + ": " + e.getMessage());
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
