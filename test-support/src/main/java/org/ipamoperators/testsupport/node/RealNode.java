package org.ipamoperators.testsupport.node;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.ipamoperators.testsupport.CommandResult;
import org.ipamoperators.testsupport.Commands;
import org.ipamoperators.testsupport.TestBinaries;
import org.opentest4j.TestAbortedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real one-node Kubernetes on this machine: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
 * containerd with runc, kubelet and kube-proxy, brought up by {@code scripts/real-node/up.sh} from the binaries
 * {@code scripts/test-env.sh} builds (as root), and torn down by {@code down.sh}, which restores every host setting.
 *
 * <p>One node per machine: whoever runs it holds a machine-wide lock ({@value #LOCK_FILE}, a POSIX record lock)
 * for the node's life, so suites of several JVMs (or several people) take turns. Teardown happens in three ways:
 * {@link #close()} (or a shutdown hook at JVM exit); a detached watchdog ({@code guard.py}) once this JVM is gone
 * without teardown (kill -9, or SIGTERM swallowed by a native library's signal handler); and before each start
 * {@code down.sh} sweeps whatever an earlier run left behind (processes, mounts, links, iptables chains, cgroups,
 * sysctls).
 *
 * <p>Addresses are documentation ranges: the node is {@value #NODE_IP} on the port-less bridge {@code ipamnode0},
 * pods get 198.51.100.0/24 on {@code cni0}, Services 203.0.113.0/24. Pods are routed only to the node and the
 * Service range, nothing is masqueraded, pods' DNS points at the node (where nothing answers), and registry pulls go
 * to a closed local port: images come only from {@link #loadImage(Path)}.
 *
 * <p>Needs root. Without it {@link #shared()} aborts the calling test with the reason; as root a missing
 * binary fails it with the command that prepares the test environment.
 */
public final class RealNode implements AutoCloseable {

  /** The node's InternalIP, on the bridge {@code ipamnode0}; also where the apiserver listens. */
  public static final String NODE_IP = "192.0.2.1";
  /** The node's name. */
  public static final String NODE_NAME = "node-1";
  /** The machine-wide lock: one node per machine. */
  public static final String LOCK_FILE = "/var/tmp/ipam-real-node.lock";

  static final String DEFAULT_STATE_DIR = "/var/tmp/ipam-real-node";
  private static final Logger LOG = LoggerFactory.getLogger(RealNode.class);
  private static final List<String> NODE_BINARIES = List.of("kubelet", "kube-proxy", "kube-scheduler",
      "kube-controller-manager");
  private static final Duration UP_TIMEOUT = Duration.ofMinutes(4);
  private static final Duration DOWN_TIMEOUT = Duration.ofMinutes(3);

  private static RealNode shared;
  private static RuntimeException sharedStartFailure;

  private final Layout layout;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final Set<Path> loadedImages = new LinkedHashSet<>();
  private final Thread shutdownHook;
  private KubernetesClient adminClient;
  private Duration startUp;
  private boolean closed;

  private RealNode(Layout layout, FileChannel lockChannel, FileLock lock) {
    this.layout = layout;
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.shutdownHook = new Thread(this::close, "real-node-down");
  }

  /**
   * Where the scripts, binaries and state are.
   *
   * @param scripts {@code scripts/real-node}
   * @param kubernetesBin etcd, kube-apiserver, kubectl and the node's binaries
   * @param images holds {@code pause.tar}
   * @param state the node's state directory (pki, etcd data, containerd root, kubelet root, logs)
   */
  public record Layout(Path scripts, Path kubernetesBin, Path images, Path state) {

    /** The layout {@code scripts/test-env.sh} prepared, from its environment variables or its defaults. */
    public static Layout fromEnvironment() {
      return from(System.getenv(), TestBinaries.fromEnvironment(), Path.of("").toAbsolutePath());
    }

    static Layout from(Map<String, String> env, TestBinaries binaries, Path workingDir) {
      Path scripts = Optional.ofNullable(env.get("IPAM_REAL_NODE_SCRIPTS")).filter(s -> !s.isBlank()).map(Path::of)
          .or(() -> findScripts(workingDir))
          .orElseThrow(() -> TestBinaries.missing("scripts/real-node/up.sh",
              workingDir.resolve("scripts/real-node/up.sh")));
      Path bin = binaries.kubernetesBinDir();
      for (String binary : NODE_BINARIES) {
        if (!Files.isExecutable(bin.resolve(binary))) {
          throw TestBinaries.missing(binary + " (the real-node tier, built by scripts/test-env.sh as root)",
              bin.resolve(binary));
        }
      }
      Path images = Optional.ofNullable(env.get("IPAM_REAL_NODE_IMAGES")).filter(s -> !s.isBlank()).map(Path::of)
          .orElseGet(() -> binaries.cacheDir().resolve("real-node").resolve("images"));
      if (!Files.isRegularFile(images.resolve("pause.tar"))) {
        throw TestBinaries.missing("the node's pause image", images.resolve("pause.tar"));
      }
      Path state = Optional.ofNullable(env.get("IPAM_REAL_NODE_STATE")).filter(s -> !s.isBlank()).map(Path::of)
          .orElse(Path.of(DEFAULT_STATE_DIR));
      return new Layout(scripts, bin, images, state);
    }

    /** {@code scripts/real-node} in the working directory or one of its parents (Maven runs modules one level down). */
    static Optional<Path> findScripts(Path from) {
      for (Path dir = from; dir != null; dir = dir.getParent()) {
        Path candidate = dir.resolve("scripts").resolve("real-node");
        if (Files.isRegularFile(candidate.resolve("up.sh"))) {
          return Optional.of(candidate);
        }
      }
      return Optional.empty();
    }

    Map<String, String> environment() {
      Map<String, String> env = new TreeMap<>();
      env.put("K8S_BIN", kubernetesBin.toString());
      env.put("IPAM_REAL_NODE_IMAGES", images.toString());
      env.put("IPAM_REAL_NODE_STATE", state.toString());
      return env;
    }
  }

  /**
   * The node of this JVM, started on first call (waiting for the machine-wide lock if another JVM holds it) and
   * torn down at JVM exit. A failed start fails every later call at once.
   *
   * @throws TestAbortedException when not root: the tier needs root, as network namespaces do
   */
  public static synchronized RealNode shared() {
    if (sharedStartFailure != null) {
      throw new IllegalStateException("the real node failed to start earlier in this JVM", sharedStartFailure);
    }
    if (shared == null) {
      requireRoot();
      try {
        shared = start(Layout.fromEnvironment(), lockTimeout());
      } catch (RuntimeException e) {
        sharedStartFailure = e;
        throw e;
      }
    }
    return shared;
  }

  /** Starts a node with {@code layout}: lock, sweep, up. The caller closes it. */
  public static RealNode start(Layout layout, Duration lockTimeout) {
    long started = System.nanoTime();
    FileChannel channel;
    FileLock lock;
    try {
      channel = FileChannel.open(Path.of(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      lock = acquire(channel, lockTimeout);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot take the real-node lock " + LOCK_FILE, e);
    }
    RealNode node = new RealNode(layout, channel, lock);
    Runtime.getRuntime().addShutdownHook(node.shutdownHook);
    try {
      node.sweep();
      CommandResult up = node.script(UP_TIMEOUT, "up.sh");
      if (!up.succeeded()) {
        throw new IllegalStateException("scripts/real-node/up.sh failed:\n" + up.output().strip() + "\n"
            + node.componentLogs());
      }
      node.startGuard();
      node.adminClient = new KubernetesClientBuilder().withConfig(node.clientConfig()).build();
      node.startUp = Duration.ofNanos(System.nanoTime() - started);
      LOG.info("real node {} Ready at https://{}:16443 in {} ms", NODE_NAME, NODE_IP, node.startUp.toMillis());
      return node;
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
  }

  private static FileLock acquire(FileChannel channel, Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    boolean told = false;
    while (true) {
      FileLock lock = channel.tryLock();
      if (lock != null) {
        return lock;
      }
      if (!told) {
        LOG.info("waiting up to {} for the real-node lock {} (another suite runs the node)", timeout, LOCK_FILE);
        told = true;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("The real-node lock " + LOCK_FILE + " was held by another process for "
            + timeout + "; one node per machine. Set IPAM_REAL_NODE_LOCK_TIMEOUT_SECONDS to wait longer.");
      }
      try {
        Thread.sleep(1000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while waiting for " + LOCK_FILE, e);
      }
    }
  }

  private static Duration lockTimeout() {
    String seconds = System.getenv("IPAM_REAL_NODE_LOCK_TIMEOUT_SECONDS");
    return Duration.ofSeconds(seconds == null || seconds.isBlank() ? 1800 : Long.parseLong(seconds.trim()));
  }

  private static void requireRoot() {
    CommandResult id = Commands.run("id", "-u");
    if (!id.succeeded() || !"0".equals(id.stdout().strip())) {
      throw new TestAbortedException("The real-node tier needs root (kubelet, containerd, iptables, cgroups); "
          + "CI runs it as root through scripts/test.sh.");
    }
  }

  /** Whatever a crashed run left (we hold the lock, so nobody else runs a node): down.sh is safe to run anyway. */
  private void sweep() {
    boolean stale = Files.exists(layout.state().resolve("started")) || Files.exists(layout.state().resolve("pids"));
    if (stale) {
      LOG.warn("sweeping the remains of an earlier real node in {} (a JVM that did not tear it down)", layout.state());
    }
    CommandResult down = script(DOWN_TIMEOUT, "down.sh");
    if (!down.succeeded()) {
      throw new IllegalStateException("Cannot clean up an earlier real node: " + down);
    }
  }

  /**
   * A detached watchdog ({@code guard.py}) that runs {@code down.sh} once this JVM is gone without tearing the node
   * down: a shutdown hook never runs on kill -9, nor on SIGTERM once a native library (helm-java's Go runtime)
   * has taken over that signal.
   */
  private void startGuard() {
    List<String> command = new ArrayList<>(List.of("setsid", "env"));
    layout.environment().forEach((k, v) -> command.add(k + "=" + v));
    command.add("PATH=" + layout.kubernetesBin() + ":" + System.getenv().getOrDefault("PATH",
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
    command.addAll(List.of("python3", layout.scripts().resolve("guard.py").toString(),
        Long.toString(ProcessHandle.current().pid()), LOCK_FILE));
    try {
      new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start the node's watchdog", e);
    }
  }

  /** Runs one of the node's scripts with the layout's environment. */
  CommandResult script(Duration timeout, String name, String... args) {
    List<String> command = new ArrayList<>(List.of("env"));
    layout.environment().forEach((k, v) -> command.add(k + "=" + v));
    command.add("PATH=" + layout.kubernetesBin() + ":" + System.getenv().getOrDefault("PATH",
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
    command.add("bash");
    command.add(layout.scripts().resolve(name).toString());
    command.addAll(List.of(args));
    return Commands.run(command, timeout);
  }

  /**
   * Imports an image tar (docker-archive or OCI, e.g. Jib's {@code buildTar}) into the node's containerd under the
   * names the kubelet asks for. Each tar is imported once per node.
   *
   * @return the image names now on the node
   */
  public synchronized List<String> loadImage(Path tar) {
    checkOpen();
    Path real = tar.toAbsolutePath().normalize();
    if (!Files.isRegularFile(real)) {
      throw new IllegalArgumentException("No image tar at " + real);
    }
    CommandResult result = script(Duration.ofMinutes(3), "load-image.sh", real.toString()).orThrow();
    loadedImages.add(real);
    List<String> names = result.stdout().lines().filter(l -> l.startsWith("loaded "))
        .map(l -> l.substring("loaded ".length()).strip()).toList();
    LOG.info("loaded {} into the node: {}", real.getFileName(), names);
    return names;
  }

  /** Whether {@code tar} was imported already. */
  public synchronized boolean loaded(Path tar) {
    return loadedImages.contains(tar.toAbsolutePath().normalize());
  }

  /** A cluster-admin client shared by the JVM. Do not close it. */
  public KubernetesClient adminClient() {
    checkOpen();
    return adminClient;
  }

  /** A fresh copy of the cluster-admin client configuration ({@code system:masters} client certificate). */
  public Config clientConfig() {
    Path pki = layout.state().resolve("pki");
    return new ConfigBuilder(Config.empty())
        .withMasterUrl("https://" + NODE_IP + ":16443")
        .withCaCertFile(pki.resolve("ca.crt").toString())
        .withClientCertFile(pki.resolve("admin.crt").toString())
        .withClientKeyFile(pki.resolve("admin.key").toString())
        .withNamespace("default")
        .build();
  }

  /** The cluster-admin kubeconfig file (for kubectl, Helm, or a process the test starts). */
  public Path kubeconfig() {
    return layout.state().resolve("admin.kubeconfig");
  }

  /** Where the binaries, scripts and state are. */
  public Layout layout() {
    return layout;
  }

  /** From taking the lock to the node Ready and the default ServiceAccount there. */
  public Duration startUp() {
    return startUp;
  }

  /** {@code kubectl} against the node with the admin kubeconfig. */
  public CommandResult kubectl(String... args) {
    List<String> command = new ArrayList<>(List.of(layout.kubernetesBin().resolve("kubectl").toString(),
        "--kubeconfig", kubeconfig().toString()));
    command.addAll(List.of(args));
    return Commands.run(command, Duration.ofSeconds(60));
  }

  /** What a failing test wants to see: pods everywhere, recent events, the tail of the kubelet's log. */
  public String diagnostics() {
    StringBuilder out = new StringBuilder();
    for (String[] args : List.of(new String[] {"get", "pods", "-A", "-o", "wide"},
        new String[] {"get", "events", "-A", "--sort-by=.lastTimestamp"})) {
      try {
        out.append("$ kubectl ").append(String.join(" ", args)).append('\n').append(kubectl(args).output());
      } catch (RuntimeException e) {
        out.append(e).append('\n');
      }
    }
    return out + componentLogs();
  }

  private String componentLogs() {
    StringBuilder out = new StringBuilder();
    for (String component : List.of("kubelet", "containerd")) {
      Path log = layout.state().resolve("logs").resolve(component + ".log");
      try {
        if (Files.isRegularFile(log)) {
          List<String> lines = Files.readAllLines(log);
          out.append("--- last lines of ").append(log).append('\n')
              .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()))).append('\n');
        }
      } catch (IOException | RuntimeException e) {
        out.append("cannot read ").append(log).append(": ").append(e).append('\n');
      }
    }
    return out.toString();
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the real node is down");
    }
  }

  /** Tears the node down ({@code down.sh}: every process, mount, link, rule, cgroup, sysctl) and releases the lock. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (Thread.currentThread() != shutdownHook) {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      }
    } catch (IllegalStateException e) {
      // the JVM is shutting down already
    }
    try {
      if (adminClient != null) {
        adminClient.close();
      }
      CommandResult down = script(DOWN_TIMEOUT, "down.sh");
      if (down.succeeded()) {
        LOG.info("real node down, host restored");
      } else {
        LOG.error("real node teardown left something behind (the next start sweeps again): {}", down);
      }
    } catch (RuntimeException e) {
      LOG.error("real node teardown failed (the next start sweeps again)", e);
    } finally {
      try {
        lock.release();
        lockChannel.close();
      } catch (IOException e) {
        LOG.warn("Cannot release {}", LOCK_FILE, e);
      }
    }
  }
}
