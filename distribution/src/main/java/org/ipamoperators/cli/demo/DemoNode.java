package org.ipamoperators.cli.demo;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The real one-node Kubernetes {@code ipam demo --node} runs on: the test environment's real-node tier
 * ({@code scripts/real-node/up.sh}: etcd, kube-apiserver, controller-manager, scheduler, containerd with runc, kubelet,
 * kube-proxy on the port-less bridge {@code ipamnode0} at {@value #NODE_IP}), brought up and torn down exactly as the
 * tests' node is, under the same machine-wide lock ({@value #LOCK_FILE}): one node per machine. {@link #close()}
 * runs {@code down.sh}, which restores every host setting; a detached watchdog does the same if this process dies
 * without closing (kill -9).
 */
final class DemoNode implements AutoCloseable {
  static final String NODE_IP = "192.0.2.1";
  static final String NODE_NAME = "node-1";
  static final String LOCK_FILE = "/var/tmp/ipam-real-node.lock";
  static final Path STATE = Path.of("/var/tmp/ipam-real-node");
  private static final List<String> NODE_BINARIES = List.of("etcd", "kube-apiserver", "kubectl", "kubelet",
      "kube-proxy", "kube-scheduler", "kube-controller-manager");

  /** A step the node's scripts log: {@code [up  12.345s] kubelet ready}. */
  private static final Pattern STEP = Pattern.compile("\\[[a-z-]+ +\\d+\\.\\d{3}s\\] ");

  private final Layout layout;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private boolean closed;

  /** Where the node's scripts, binaries and sandbox image are. */
  record Layout(Path scripts, Path bin, Path images) {

    /** The layout scripts/test-env.sh prepared as root, or why there is none. */
    static Layout find(Map<String, String> env, String userHome, Path codeLocation) {
      Path cache = DemoCluster.cacheDir(env, userHome);
      Path bin = DemoCluster.binDir(env, cache);
      List<String> missing = new ArrayList<>();
      for (String b : NODE_BINARIES) {
        if (!Files.isExecutable(bin.resolve(b))) {
          missing.add(bin.resolve(b).toString());
        }
      }
      Path images = Optional.ofNullable(env.get("IPAM_REAL_NODE_IMAGES")).filter(s -> !s.isBlank()).map(Path::of)
          .orElse(cache.resolve("real-node").resolve("images"));
      if (!Files.isRegularFile(images.resolve("pause.tar"))) {
        missing.add(images.resolve("pause.tar").toString());
      }
      Optional<Path> scripts = Optional.ofNullable(env.get("IPAM_REAL_NODE_SCRIPTS")).filter(s -> !s.isBlank())
          .map(Path::of).or(() -> findScripts(Path.of("").toAbsolutePath())).or(() -> findScripts(codeLocation));
      if (scripts.isEmpty()) {
        missing.add("scripts/real-node/up.sh (run ipam demo --node from the project's checkout)");
      }
      if (!missing.isEmpty()) {
        throw new Missing(missing);
      }
      return new Layout(scripts.get(), bin, images);
    }

    private static Optional<Path> findScripts(Path from) {
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
      env.put("K8S_BIN", bin.toString());
      env.put("IPAM_REAL_NODE_IMAGES", images.toString());
      env.put("IPAM_REAL_NODE_STATE", STATE.toString());
      env.put("PATH", bin + ":" + System.getenv().getOrDefault("PATH",
          "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
      return env;
    }
  }

  /** What the real-node tier lacks on this machine. */
  static final class Missing extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Missing(List<String> what) {
      super(String.join(", ", what), null, false, false);
    }
  }

  private DemoNode(Layout layout, FileChannel lockChannel, FileLock lock) {
    this.layout = layout;
    this.lockChannel = lockChannel;
    this.lock = lock;
  }

  /**
   * Takes the machine-wide lock (waiting up to {@code timeout}), sweeps an earlier node's remains, brings it up;
   * {@code progress} is told each step the scripts log, as it happens.
   */
  static DemoNode start(Layout layout, Duration timeout, Consumer<String> progress)
      throws IOException, InterruptedException {
    FileChannel channel = FileChannel.open(Path.of(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    long deadline = System.nanoTime() + timeout.toNanos();
    FileLock lock;
    while ((lock = channel.tryLock()) == null) {
      if (System.nanoTime() > deadline) {
        channel.close();
        throw new IllegalStateException("another real node runs on this machine (" + LOCK_FILE
            + " is held, by a test run or another demo); one node per machine");
      }
      Thread.sleep(1000);
    }
    DemoNode node = new DemoNode(layout, channel, lock);
    try {
      run(layout, Duration.ofMinutes(3), "down.sh", progress);
      run(layout, Duration.ofMinutes(4), "up.sh", progress);
      node.startGuard();
      return node;
    } catch (IOException | InterruptedException | RuntimeException e) {
      node.close();
      throw e;
    }
  }

  /** Imports an image tar into the node's containerd under the names the kubelet asks for. */
  List<String> loadImage(Path tar) throws IOException, InterruptedException {
    return script(Duration.ofMinutes(3), "load-image.sh", tar.toAbsolutePath().toString()).lines()
        .filter(l -> l.startsWith("loaded ")).map(l -> l.substring("loaded ".length()).strip()).toList();
  }

  Path kubeconfig() {
    return STATE.resolve("admin.kubeconfig");
  }

  Path logs() {
    return STATE.resolve("logs");
  }

  Path kubectl() {
    return layout.bin().resolve("kubectl");
  }

  Config clientConfig() {
    Path pki = STATE.resolve("pki");
    return new ConfigBuilder(Config.empty()).withMasterUrl("https://" + NODE_IP + ":16443")
        .withCaCertFile(pki.resolve("ca.crt").toString()).withClientCertFile(pki.resolve("admin.crt").toString())
        .withClientKeyFile(pki.resolve("admin.key").toString()).withNamespace("default").build();
  }

  /** Runs a script of scripts/real-node with the layout's environment; its output, or a failure with it. */
  String script(Duration timeout, String name, String... args) throws IOException, InterruptedException {
    return run(layout, timeout, name, line -> { }, args);
  }

  /**
   * Runs a script of scripts/real-node; each line it logs as a step ({@code [name 1.234s] what}) goes to
   * {@code progress} while it runs. Its output, or a failure with it; one still running after {@code timeout} is
   * killed.
   */
  static String run(Layout layout, Duration timeout, String name, Consumer<String> progress, String... args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("bash", layout.scripts().resolve(name).toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    builder.environment().putAll(layout.environment());
    Process p = builder.start();
    StringBuffer output = new StringBuffer();
    Thread reader = new Thread(() -> read(p, output, progress), "ipam-demo-" + name);
    reader.setDaemon(true);
    reader.start();
    if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      throw new IllegalStateException(name + " did not finish within " + timeout + ":\n" + output.toString().strip());
    }
    reader.join(TimeUnit.SECONDS.toMillis(10));
    String text = output.toString();
    if (p.exitValue() != 0) {
      throw new IllegalStateException(name + " failed (exit " + p.exitValue() + "):\n" + text.strip());
    }
    return text;
  }

  private static void read(Process p, StringBuffer output, Consumer<String> progress) {
    try (BufferedReader r = p.inputReader(StandardCharsets.UTF_8)) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        output.append(line).append('\n');
        if (STEP.matcher(line).lookingAt()) {
          progress.accept(line);
        }
      }
    } catch (IOException e) {
      output.append("(output not read: ").append(e.getMessage()).append(")\n");
    }
  }

  /** The scripts' watchdog: tears the node down once this process is gone without doing it (kill -9). */
  private void startGuard() throws IOException {
    List<String> command = new ArrayList<>(List.of("setsid", "env"));
    layout.environment().forEach((k, v) -> command.add(k + "=" + v));
    command.addAll(List.of("python3", layout.scripts().resolve("guard.py").toString(),
        Long.toString(ProcessHandle.current().pid()), LOCK_FILE));
    new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
  }

  /** {@code down.sh} (every process, mount, link, iptables rule, cgroup, sysctl of the node), then the lock. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      script(Duration.ofMinutes(3), "down.sh");
    } catch (IOException | RuntimeException e) {
      System.err.println("ipam demo: the node's teardown left something behind (the next start sweeps it): "
          + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        lock.release();
        lockChannel.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
