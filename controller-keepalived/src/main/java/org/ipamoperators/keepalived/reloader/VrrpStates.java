package org.ipamoperators.keepalived.reloader;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of every VRRP instance of a running keepalived (what keepalived-operator got from a keepalived exporter).
 * keepalived has no query interface in 2.2.7 without SNMP or D-Bus, but on SIGUSR1 its VRRP process rewrites a text
 * dump of its data, {@code keepalived.data} in its {@code $TMPDIR} ({@code /tmp}). {@link #read} sends the signal,
 * waits a bounded time for the rewritten file and parses it with {@link #parse}.
 *
 * <p>In the keepalived pod the reloader sees keepalived's processes (shared process namespace) but not its
 * container's {@code /tmp}; {@code /proc/<pid>/root} is that container's root, hence {@link #dumpFileOf(long)}.
 */
public final class VrrpStates {
  private static final Logger LOG = LoggerFactory.getLogger(VrrpStates.class);

  /** Where keepalived writes its dump when {@code TMPDIR} is not set. */
  public static final String DEFAULT_DUMP = "/tmp/keepalived.data";
  /** How long {@link #read(long, Path)} waits for keepalived to rewrite the dump. */
  public static final Duration DEFAULT_WAIT = Duration.ofSeconds(2);

  private static final String SECTION = "------<";
  private static final String TOPOLOGY = "------< VRRP Topology >------";
  private static final String INSTANCE = " VRRP Instance = ";
  // Instance fields are indented by three spaces; deeper lines (tracked interfaces, peers, addresses) by more.
  private static final String STATE = "   State = ";
  private static final String VRID = "   Virtual Router ID = ";
  private static final String INTERFACE = "   Interface = ";

  /** The last problem logged; the same one is not logged again on every scrape. */
  private static final AtomicReference<String> LAST_PROBLEM = new AtomicReference<>();

  private VrrpStates() {}

  /** keepalived's default dump file as seen from another container of the pod: {@code /proc/<pid>/root/tmp/...}. */
  public static Path dumpFileOf(long pid) {
    return Path.of("/proc", Long.toString(pid), "root").resolve(DEFAULT_DUMP.substring(1));
  }

  /** {@link #read(long, Path, Duration)} with {@link #DEFAULT_WAIT}. */
  public static List<VrrpInstanceState> read(long pid, Path dumpFile) {
    return read(pid, dumpFile, DEFAULT_WAIT);
  }

  /**
   * Sends SIGUSR1 to keepalived ({@code pid}: the parent of its pid file, which passes the signal on to its VRRP
   * process) and returns the instances of the dump it then writes to {@code dumpFile}. Only a dump written after
   * the signal counts (a stale one from before is never reported). Never throws: when keepalived is not running,
   * runs no VRRP instance (then it writes no dump), or the dump does not come within {@code wait} or cannot be
   * parsed, the answer is empty and the cause is logged (once while it persists).
   */
  public static synchronized List<VrrpInstanceState> read(long pid, Path dumpFile, Duration wait) {
    Snapshot before = Snapshot.of(dumpFile);
    try {
      KeepalivedSignal.send("USR1", pid);
    } catch (RuntimeException e) {
      return problem("cannot ask keepalived for its VRRP states: " + e.getMessage());
    }
    long deadline = System.nanoTime() + wait.toNanos();
    Snapshot now = before;
    boolean rewritten = false;
    while (true) {
      now = Snapshot.of(dumpFile);
      if (now.text().isPresent() && !now.sameFileState(before)) {
        rewritten = true;
        Optional<List<VrrpInstanceState>> parsed = parse(now.text().get());
        if (parsed.isPresent()) {
          LAST_PROBLEM.set(null);
          return parsed.get();
        }
      }
      if (System.nanoTime() >= deadline) {
        break;
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return problem("interrupted while waiting for keepalived's dump " + dumpFile);
      }
    }
    if (rewritten) {
      return problem("keepalived's dump " + dumpFile + " has no complete VRRP Topology section");
    }
    return problem("keepalived (pid " + pid + ") did not write " + dumpFile + " within " + wait.toMillis()
        + " ms of SIGUSR1 (no VRRP instance configured, another TMPDIR?)" + now.error().map(e -> ": " + e).orElse(""));
  }

  /**
   * The instances of a keepalived 2.2.7 data dump, in the dump's order; empty if the text has no VRRP Topology
   * section followed by a further section (keepalived writes the file in pieces: a section that is not yet followed
   * by the next one may still be growing).
   */
  public static Optional<List<VrrpInstanceState>> parse(String dump) {
    List<VrrpInstanceState> instances = new ArrayList<>();
    boolean inTopology = false;
    boolean complete = false;
    Builder current = null;
    for (String line : dump.split("\n", -1)) {
      if (line.startsWith(SECTION)) {
        if (inTopology) {
          complete = true;
          break;
        }
        inTopology = line.strip().equals(TOPOLOGY);
        continue;
      }
      if (!inTopology) {
        continue;
      }
      if (line.startsWith(INSTANCE)) {
        if (current != null) {
          current.build().ifPresent(instances::add);
        }
        current = new Builder(line.substring(INSTANCE.length()).strip());
      } else if (current != null && line.startsWith(STATE) && current.state == null) {
        current.state = VrrpInstanceState.State.of(line.substring(STATE.length()));
      } else if (current != null && line.startsWith(VRID) && current.vrid < 0) {
        current.vrid = parseVrid(line.substring(VRID.length()));
      } else if (current != null && line.startsWith(INTERFACE) && current.iface == null) {
        current.iface = line.substring(INTERFACE.length()).strip();
      }
    }
    if (!complete) {
      return Optional.empty();
    }
    if (current != null) {
      current.build().ifPresent(instances::add);
    }
    return Optional.of(List.copyOf(instances));
  }

  private static int parseVrid(String text) {
    try {
      return Integer.parseInt(text.strip());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static List<VrrpInstanceState> problem(String message) {
    if (!message.equals(LAST_PROBLEM.getAndSet(message))) {
      LOG.warn("{}; reporting no VRRP states", message);
    } else {
      LOG.debug("{}", message);
    }
    return List.of();
  }

  private static final class Builder {
    private final String name;
    private VrrpInstanceState.State state;
    private int vrid = -1;
    private String iface;

    private Builder(String name) {
      this.name = name;
    }

    /** An instance without a name, state or router id is not reported (a dump format this parser does not know). */
    private Optional<VrrpInstanceState> build() {
      if (name.isEmpty() || state == null || vrid < 0) {
        return Optional.empty();
      }
      return Optional.of(new VrrpInstanceState(name, state, vrid,
          Optional.ofNullable(iface).filter(s -> !s.isEmpty())));
    }
  }

  /** The dump file's modification time and text at one moment (absent: no file yet, or unreadable: error). */
  private record Snapshot(Optional<FileTime> modified, Optional<String> text, Optional<String> error) {
    static Snapshot of(Path file) {
      try {
        FileTime modified = Files.getLastModifiedTime(file);
        String text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        return new Snapshot(Optional.of(modified), Optional.of(text), Optional.empty());
      } catch (NoSuchFileException e) {
        return new Snapshot(Optional.empty(), Optional.empty(), Optional.empty());
      } catch (IOException | SecurityException e) {
        // e.g. no access to /proc/<pid>/root (another user without CAP_SYS_PTRACE)
        return new Snapshot(Optional.empty(), Optional.empty(), Optional.of(e.toString()));
      }
    }

    /** Rewritten files differ in time or text (each dump has new timestamps in it). */
    boolean sameFileState(Snapshot other) {
      return modified.equals(other.modified) && text.equals(other.text);
    }
  }
}
