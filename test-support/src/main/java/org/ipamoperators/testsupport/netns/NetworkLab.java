package org.ipamoperators.testsupport.netns;

import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.testsupport.CommandResult;
import org.ipamoperators.testsupport.Commands;
import org.ipamoperators.testsupport.TestBinaries;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A throw-away set of network namespaces joined by veth pairs and bridges, all deleted by {@link #close()}.
 *
 * <p>Every link lives inside the lab's namespaces: veth ends are created directly in their namespaces and
 * bridges sit in a namespace of their own, so the host's network is never touched. Namespace names carry the JVM's
 * pid ({@code ipamt-<pid>-<n>-<name>}); namespaces left behind by a JVM that died are deleted when the next lab is
 * created, and a shutdown hook deletes those of labs a test failed to close.
 *
 * <p>Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN); see {@link #unavailableReason()}.
 */
public final class NetworkLab implements AutoCloseable {

  /** Prefix of every namespace a lab creates. */
  public static final String PREFIX = "ipamt-";

  private static final Logger LOG = LoggerFactory.getLogger(NetworkLab.class);
  private static final Pattern OURS = Pattern.compile("^" + PREFIX + "(\\d+)-\\S+");
  private static final Pattern INTERFACE_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,15}");
  private static final AtomicInteger COUNTER = new AtomicInteger();
  private static final Set<NetworkLab> OPEN = ConcurrentHashMap.newKeySet();
  private static final long PID = ProcessHandle.current().pid();
  private static volatile Optional<String> unavailable;
  private static volatile boolean swept;

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> List.copyOf(OPEN).forEach(NetworkLab::closeQuietly),
        "network-lab-cleanup"));
  }

  private final String ip;
  private final Deque<NetworkNamespace> namespaces = new ArrayDeque<>();
  private int links;
  private boolean closed;

  private NetworkLab(String ip) {
    this.ip = ip;
  }

  /**
   * A new, empty lab.
   *
   * @throws IllegalStateException if network namespaces cannot be created here (see {@link #unavailableReason()})
   */
  public static NetworkLab create() {
    String ip = TestBinaries.fromEnvironment().ip().toString();
    unavailableReason().ifPresent(reason -> {
      throw new IllegalStateException("Network namespaces unavailable: " + reason);
    });
    sweepStale(ip);
    NetworkLab lab = new NetworkLab(ip);
    OPEN.add(lab);
    return lab;
  }

  /**
   * Why network namespaces cannot be created in this JVM, or empty if they can. Probed once by creating and
   * deleting a namespace.
   */
  public static Optional<String> unavailableReason() {
    Optional<String> reason = unavailable;
    if (reason == null) {
      synchronized (NetworkLab.class) {
        reason = unavailable;
        if (reason == null) {
          reason = probe();
          unavailable = reason;
        }
      }
    }
    return reason;
  }

  /** A new namespace with {@code lo} up; {@code shortName} only makes its name readable. */
  public synchronized NetworkNamespace namespace(String shortName) {
    checkOpen();
    String name = PREFIX + PID + "-" + COUNTER.incrementAndGet() + "-" + shortName.replaceAll("[^A-Za-z0-9_.-]", "_");
    Commands.run(ip, "netns", "add", name).orThrow();
    NetworkNamespace namespace = new NetworkNamespace(name, ip);
    namespaces.push(namespace);
    namespace.up("lo");
    return namespace;
  }

  /** Joins two namespaces by a veth pair, both ends up, named {@code nameInA} in {@code a} and {@code nameInB} in {@code b}. */
  public synchronized void veth(NetworkNamespace a, String nameInA, NetworkNamespace b, String nameInB) {
    checkOpen();
    checkInterfaceName(nameInA);
    checkInterfaceName(nameInB);
    a.ip("link", "add", nameInA, "type", "veth", "peer", "name", nameInB, "netns", b.name());
    a.up(nameInA);
    b.up(nameInB);
  }

  /** A new namespace holding only a bridge {@code br0} (up), to which namespaces are attached. */
  public synchronized Bridge bridge(String shortName) {
    NetworkNamespace hub = namespace(shortName);
    hub.ip("link", "add", Bridge.NAME, "type", "bridge");
    hub.up(Bridge.NAME);
    return new Bridge(hub);
  }

  /** Attaches a namespace to a bridge by a veth pair whose end in {@code namespace} is called {@code interfaceName}. */
  public synchronized void attach(Bridge bridge, NetworkNamespace namespace, String interfaceName) {
    String port = "p" + (++links);
    veth(bridge.namespace(), port, namespace, interfaceName);
    bridge.namespace().ip("link", "set", port, "master", Bridge.NAME);
  }

  /** The namespaces created so far, newest first. */
  public synchronized List<NetworkNamespace> namespaces() {
    return List.copyOf(namespaces);
  }

  /** Deletes every namespace of the lab (and with them their veth pairs and bridges). Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    OPEN.remove(this);
    List<String> failures = new ArrayList<>();
    while (!namespaces.isEmpty()) {
      NetworkNamespace namespace = namespaces.pop();
      CommandResult result = Commands.run(ip, "netns", "delete", namespace.name());
      if (!result.succeeded() && !result.stderr().contains("No such file")) {
        failures.add(result.toString());
      }
    }
    if (!failures.isEmpty()) {
      throw new IllegalStateException("Cannot delete network namespaces: " + String.join("; ", failures));
    }
  }

  /** Names of the namespaces that currently exist on the host, for leak checks. */
  public static List<String> existingNamespaces() {
    String ip = TestBinaries.fromEnvironment().ip().toString();
    return Commands.run(ip, "netns", "list").orThrow().stdout().lines()
        .map(line -> line.split("\\s+", 2)[0])
        .filter(name -> !name.isEmpty())
        .toList();
  }

  /** A bridge in a namespace of its own; see {@link NetworkLab#bridge(String)}. */
  public record Bridge(NetworkNamespace namespace) {
    /** The bridge's interface name inside its namespace. */
    public static final String NAME = "br0";
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("NetworkLab already closed");
    }
  }

  private static void checkInterfaceName(String name) {
    if (!INTERFACE_NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("Not a usable interface name (1-15 of [A-Za-z0-9_.-]): " + name);
    }
  }

  private void closeQuietly() {
    try {
      close();
    } catch (RuntimeException e) {
      LOG.warn("Cleaning up a network lab failed", e);
    }
  }

  private static Optional<String> probe() {
    String ip;
    try {
      ip = TestBinaries.fromEnvironment().ip().toString();
    } catch (RuntimeException e) {
      return Optional.of(e.getMessage());
    }
    String name = PREFIX + PID + "-probe";
    CommandResult add = Commands.run(ip, "netns", "add", name);
    if (!add.succeeded()) {
      return Optional.of("'ip netns add' failed (uid " + uid() + "; it needs CAP_SYS_ADMIN and CAP_NET_ADMIN): "
          + add.stderr().strip());
    }
    Commands.run(ip, "netns", "delete", name);
    return Optional.empty();
  }

  private static void sweepStale(String ip) {
    if (swept) {
      return;
    }
    swept = true;
    for (String name : existingNamespaces()) {
      Matcher matcher = OURS.matcher(name);
      if (matcher.matches()) {
        long pid = Long.parseLong(matcher.group(1));
        boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        if (pid != PID && !alive) {
          LOG.info("Deleting network namespace {} left behind by process {}", name, pid);
          Commands.run(ip, "netns", "delete", name);
        }
      }
    }
  }

  private static String uid() {
    try {
      return java.nio.file.Files.readAllLines(Path.of("/proc/self/status")).stream()
          .filter(line -> line.startsWith("Uid:"))
          .map(line -> line.split("\\s+")[2])
          .findFirst()
          .orElse("?");
    } catch (java.io.IOException e) {
      return "?";
    }
  }
}
