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
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of every VRRP instance of a running keepalived (what keepalived-operator got from a keepalived exporter).
 * keepalived has no query interface in 2.2.7 without SNMP or D-Bus, but on SIGUSR1 its VRRP process rewrites a text
 * dump of its data, {@code keepalived.data} in its {@code $TMPDIR} ({@code /tmp}). {@link #read} sends the signal,
 * waits a bounded time for the rewritten file and parses it with {@link #parse}.
 *
 * <p>At most one signal per {@code interval}: a scrape within it gets the answer of the last dump, so however often
 * (and by whomever) {@code /metrics} is fetched, keepalived writes its dump no more often than that.
 *
 * <p>In the keepalived pod the reloader sees keepalived's processes (shared process namespace) but not its
 * container's {@code /tmp}; {@code /proc/<pid>/root} is that container's root, hence {@link #dumpFileOf(long)}.
 */
public final class VrrpStates {
  private static final Logger LOG = LoggerFactory.getLogger(VrrpStates.class);

  /** Where keepalived writes its dump when {@code TMPDIR} is not set. */
  public static final String DEFAULT_DUMP = "/tmp/keepalived.data";
  /** How long {@link #read} waits for keepalived to rewrite the dump. */
  public static final Duration DEFAULT_WAIT = Duration.ofSeconds(2);
  /** The shortest time between two dumps keepalived is asked for. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(5);

  private static final String SECTION = "------<";
  private static final String TOPOLOGY = "------< VRRP Topology >------";
  private static final String INSTANCE = " VRRP Instance = ";
  // Instance fields are indented by three spaces; deeper lines (tracked interfaces, peers, addresses) by more.
  private static final String STATE = "   State = ";
  private static final String VRID = "   Virtual Router ID = ";
  private static final String INTERFACE = "   Interface = ";

  private final Duration interval;
  private final Duration wait;
  private final LongSupplier nanoTime;
  private final LongConsumer signal;
  /** The last problem logged; the same one is not logged again on every scrape. */
  private String lastProblem;
  /** The answer of the last dump asked for, served until {@code interval} has passed. */
  private Answer last;

  /** The answer of one dump: for which keepalived and file, when it was asked for, and what it said. */
  private record Answer(long pid, Path dumpFile, long askedAtNanos, List<VrrpInstanceState> states) {}

  /** Signals with {@code kill -USR1}, waits {@link #DEFAULT_WAIT} for each dump. */
  public VrrpStates(Duration interval) {
    this(interval, DEFAULT_WAIT);
  }

  public VrrpStates(Duration interval, Duration wait) {
    this(interval, wait, System::nanoTime, pid -> KeepalivedSignal.send("USR1", pid));
  }

  /**
   * @param nanoTime the monotonic clock the interval is measured on
   * @param signal sends SIGUSR1 to a pid; throws when it cannot
   */
  VrrpStates(Duration interval, Duration wait, LongSupplier nanoTime, LongConsumer signal) {
    if (interval == null || interval.isNegative() || wait == null || wait.isNegative()) {
      throw new IllegalArgumentException("interval and wait must be zero or more");
    }
    this.interval = interval;
    this.wait = wait;
    this.nanoTime = nanoTime;
    this.signal = signal;
  }

  /** keepalived's default dump file as seen from another container of the pod: {@code /proc/<pid>/root/tmp/...}. */
  public static Path dumpFileOf(long pid) {
    return Path.of("/proc", Long.toString(pid), "root").resolve(DEFAULT_DUMP.substring(1));
  }

  /**
   * The VRRP instances of keepalived {@code pid} as it last dumped them to {@code dumpFile}: when the last dump asked
   * of this keepalived is less than {@code interval} old, its answer (empty too, if it was); else a new one, see
   * {@link #dump}. Never throws.
   */
  public synchronized List<VrrpInstanceState> read(long pid, Path dumpFile) {
    long now = nanoTime.getAsLong();
    if (last != null && last.pid() == pid && last.dumpFile().equals(dumpFile)
        && now - last.askedAtNanos() < interval.toNanos()) {
      return last.states();
    }
    List<VrrpInstanceState> states = dump(pid, dumpFile);
    last = new Answer(pid, dumpFile, now, states);
    return states;
  }

  /**
   * Sends SIGUSR1 to keepalived ({@code pid}: the parent of its pid file, which passes the signal on to its VRRP
   * process) and returns the instances of the dump it then writes to {@code dumpFile}. Only a dump written after
   * the signal counts (a stale one from before is never reported). When keepalived is not running, runs no VRRP
   * instance (then it writes no dump), or the dump does not come within {@code wait} or cannot be parsed, the answer
   * is empty and the cause is logged (once while it persists).
   */
  private List<VrrpInstanceState> dump(long pid, Path dumpFile) {
    Snapshot before = Snapshot.of(dumpFile);
    try {
      signal.accept(pid);
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
          lastProblem = null;
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

  private List<VrrpInstanceState> problem(String message) {
    String before = lastProblem;
    lastProblem = message;
    if (!message.equals(before)) {
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
