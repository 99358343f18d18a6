package org.ipamoperators.testsupport.kube;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.ipamoperators.testsupport.OrphanGuard;
import org.ipamoperators.testsupport.TestBinaries;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real etcd and kube-apiserver on loopback ports, started through fabric8 kube-api-test from the binaries
 * {@code scripts/test-env.sh} prepares.
 *
 * <p>{@link #shared()} starts one per JVM on first use and stops it when the JVM exits. There is no
 * kube-controller-manager: no garbage collection of owner references, no namespace finalization, no service
 * accounts or tokens, no pods scheduled. Everything the apiserver itself does is real: validation against the
 * OpenAPI schema, defaulting, pruning, optimistic locking, the status subresource, finalizers and
 * {@code deletionTimestamp}, server-side apply with managed fields, watches, admission and RBAC.
 *
 * <p>Each instance works in its own temporary directory: fresh certificates, a private etcd data directory, and
 * wrapper scripts that keep etcd on 127.0.0.1 (kube-api-test would bind it to 0.0.0.0) and stop etcd and
 * kube-apiserver if the JVM dies without its shutdown hooks ({@link OrphanGuard}).
 */
public final class KubeApiServer {

  private static final Logger LOG = LoggerFactory.getLogger(KubeApiServer.class);

  /** Milliseconds kube-api-test waits for etcd and kube-apiserver to become ready. */
  private static final int STARTUP_TIMEOUT_MILLIS = 120_000;

  private static KubeApiServer shared;
  private static RuntimeException sharedStartFailure;
  private static KubeApiServer sharedAudited;
  private static RuntimeException sharedAuditedStartFailure;

  private final Path workDir;
  private final KubeAPIServer server;
  private final Config config;
  private final String kubeconfig;
  private final KubernetesClient adminClient;
  private final String version;
  private volatile boolean stopped;

  private final boolean restartable;
  private final boolean audited;

  private KubeApiServer(Path binDir, boolean restartable, boolean audited) {
    long started = System.nanoTime();
    this.version = binDir.getFileName().toString().replace("-linux-amd64", "");
    this.restartable = restartable;
    this.audited = audited;
    Started up = startWithRetry(binDir, version, restartable, audited);
    this.workDir = up.workDir();
    this.server = up.server();
    this.kubeconfig = server.getKubeConfigYaml();
    this.config = clientConfig(workDir, Config.fromKubeconfig(kubeconfig).getMasterUrl());
    this.adminClient = newClient();
    LOG.info("kube-apiserver {} ready at {} in {} ms", version, config.getMasterUrl(),
        Duration.ofNanos(System.nanoTime() - started).toMillis());
  }

  private record Started(Path workDir, KubeAPIServer server) {}

  /**
   * Starts etcd and kube-apiserver, again in a fresh directory when kube-api-test gave up before its own timeout.
   * Its readiness wait compares {@code LocalTime}s, so a wait that begins less than the timeout before midnight
   * ends at once with "did not start properly" (a start at 23:58, say): retrying until the clock has passed
   * midnight is the way past it. A real timeout is not retried.
   */
  private static Started startWithRetry(Path binDir, String version, boolean restartable, boolean audited) {
    long deadline = System.nanoTime() + Duration.ofMillis(2L * STARTUP_TIMEOUT_MILLIS).toNanos();
    for (int attempt = 1; ; attempt++) {
      Path workDir = createWorkDir(binDir, restartable);
      KubeAPIServerConfigBuilder builder = KubeAPIServerConfigBuilder.anAPIServerConfig()
          .withTestDir(workDir.toString())
          .withApiServerVersion(version)
          // Set every value explicitly: kube-api-test 7.5.2 casts environment strings to Boolean/Integer
          // (ClassCastException when KUBE_API_TEST_OFFLINE_MODE=true is exported).
          .withOfflineMode(true)
          .withUpdateKubeConfig(false)
          .withWaitForEtcdHealthCheckOnStartup(true)
          .withStartupTimeout(STARTUP_TIMEOUT_MILLIS)
          .withApiServerFlag("--bind-address", "127.0.0.1")
          // The "kubernetes" Service endpoints would otherwise point at a host interface address.
          .withApiServerFlag("--endpoint-reconciler-type", "none");
      if (audited) {
        AuditLog.configure(workDir).forEach(builder::withApiServerFlag);
      }
      KubeAPIServer server = new KubeAPIServer(builder.build());
      long attemptStarted = System.nanoTime();
      try {
        server.start();
        return new Started(workDir, server);
      } catch (RuntimeException e) {
        safeStop(server, workDir);
        Duration spent = Duration.ofNanos(System.nanoTime() - attemptStarted);
        if (!StartupRetry.gaveUpEarly(e, spent, Duration.ofMillis(STARTUP_TIMEOUT_MILLIS))
            || System.nanoTime() > deadline) {
          throw new IllegalStateException("kube-apiserver " + version + " (from " + binDir + ") did not start: "
              + e + ". Its output is logged at DEBUG by io.fabric8.kubeapitest.process", e);
        }
        LOG.warn("kube-apiserver start {} gave up after {} ms, before its {} ms timeout (kube-api-test's wait "
            + "wraps at midnight); trying again", attempt, spent.toMillis(), STARTUP_TIMEOUT_MILLIS);
        sleepQuietly(Duration.ofSeconds(2));
      }
    }
  }

  private static void sleepQuietly(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting to start kube-apiserver again", e);
    }
  }

  /**
   * The apiserver of this JVM, started on first call. If the start failed, every later call fails at once with
   * the same cause instead of waiting for another start-up timeout.
   */
  public static synchronized KubeApiServer shared() {
    if (sharedStartFailure != null) {
      throw new IllegalStateException("kube-apiserver failed to start earlier in this JVM", sharedStartFailure);
    }
    if (shared == null) {
      Path binDir = TestBinaries.fromEnvironment().kubernetesBinDir();
      try {
        shared = new KubeApiServer(binDir, false, false);
      } catch (RuntimeException e) {
        sharedStartFailure = e;
        throw e;
      }
      Runtime.getRuntime().addShutdownHook(new Thread(shared::stop, "kube-apiserver-stop"));
    }
    return shared;
  }

  /**
   * A second apiserver of this JVM, started on first call, that writes an audit log of every request at the
   * Metadata level ({@link #auditEvents(long)}): only test classes that ask for it ({@code @KubeApiTest(auditLog =
   * true)}) start and use it, so the others pay nothing for the log.
   */
  public static synchronized KubeApiServer sharedAudited() {
    if (sharedAuditedStartFailure != null) {
      throw new IllegalStateException("the audited kube-apiserver failed to start earlier in this JVM",
          sharedAuditedStartFailure);
    }
    if (sharedAudited == null) {
      try {
        sharedAudited = new KubeApiServer(TestBinaries.fromEnvironment().kubernetesBinDir(), false, true);
      } catch (RuntimeException e) {
        sharedAuditedStartFailure = e;
        throw e;
      }
      Runtime.getRuntime().addShutdownHook(new Thread(sharedAudited::stop, "kube-apiserver-audited-stop"));
    }
    return sharedAudited;
  }

  /**
   * Where the audit log ends now: pass it to {@link #auditEvents(long)} to see only the requests made after this
   * call. Only on an apiserver from {@link #sharedAudited()}.
   */
  public long auditMark() {
    return AuditLog.size(auditLogFile());
  }

  /**
   * The requests the audit log holds after {@code mark} (from {@link #auditMark()}), one per request (its
   * last stage), in the order they were logged. The log is written as requests complete: a caller that needs
   * every request up to some moment makes a request of its own at that moment and waits for it here.
   */
  public List<AuditEvent> auditEvents(long mark) {
    return AuditLog.read(auditLogFile(), mark);
  }

  private Path auditLogFile() {
    if (!audited) {
      throw new IllegalStateException("no audit log: use @KubeApiTest(auditLog = true) or sharedAudited()");
    }
    return AuditLog.file(workDir);
  }

  /**
   * An apiserver and etcd of the caller's own, which {@link #restartApiServer()} and {@link #killEtcd()} can take
   * down mid-test; the caller {@link #stop()}s it. Each runs under a wrapper that starts it again, with the same
   * flags, ports and data, after a restart the test asked for, so kube-api-test never sees a process end.
   */
  public static KubeApiServer startPrivate() {
    return new KubeApiServer(TestBinaries.fromEnvironment().kubernetesBinDir(), true, false);
  }

  /**
   * Stops kube-apiserver with SIGTERM (its graceful shutdown: {@code /readyz} fails, requests drain) and waits until
   * the wrapper has started it again and it is ready. Returns how long it was down, from the signal to ready.
   */
  public Duration restartApiServer() {
    return restart("kube-apiserver", false);
  }

  /** Kills etcd with SIGKILL and waits until it runs again and the apiserver is ready. Returns how long that took. */
  public Duration killEtcd() {
    return restart("etcd", true);
  }

  private Duration restart(String name, boolean forcibly) {
    if (!restartable) {
      throw new IllegalStateException("only an apiserver from startPrivate() restarts");
    }
    long started = System.nanoTime();
    long deadline = started + Duration.ofMillis(STARTUP_TIMEOUT_MILLIS).toNanos();
    long old = RestartableProcess.pid(workDir, name);
    RestartableProcess.requestRestart(workDir, name);
    ProcessHandle handle = ProcessHandle.of(old)
        .orElseThrow(() -> new IllegalStateException(name + " (pid " + old + ") is not running"));
    if (forcibly) {
      handle.destroyForcibly();
    } else {
      handle.destroy();
    }
    long pid;
    while (handle.isAlive() || (pid = RestartableProcess.pid(workDir, name)) == old || pid < 0 || !ready()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(name + " did not come back within " + STARTUP_TIMEOUT_MILLIS + " ms");
      }
      sleepQuietly(Duration.ofMillis(100));
    }
    Duration down = Duration.ofNanos(System.nanoTime() - started);
    LOG.info("{} restarted; the apiserver was ready again after {} ms", name, down.toMillis());
    return down;
  }

  private boolean ready() {
    try {
      return "ok".equals(adminClient.raw("/readyz"));
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** The version of the running binaries, e.g. {@code 1.34.4}. */
  public String version() {
    return version;
  }

  /** {@code https://127.0.0.1:<port>}. */
  public String url() {
    return config.getMasterUrl();
  }

  /** A kubeconfig (YAML) for a cluster-admin (group {@code system:masters}), e.g. for JOSDK or kubectl. */
  public String kubeconfig() {
    return kubeconfig;
  }

  /**
   * The directory with the apiserver's serving certificate and key ({@code apiserver.crt}, {@code apiserver.key})
   * and the admin client's ({@code client.crt}, {@code client.key}): a proxy in front of the apiserver presents
   * the same certificate, so clients keep their kubeconfig's CA.
   */
  public Path certificateDir() {
    return workDir;
  }

  /** A fresh copy of the cluster-admin client configuration, with {@code default} as namespace. */
  public Config clientConfig() {
    return new ConfigBuilder(config).build();
  }

  /** A new cluster-admin client; the caller closes it. */
  public KubernetesClient newClient() {
    return new KubernetesClientBuilder().withConfig(clientConfig()).build();
  }

  /** A cluster-admin client shared by the JVM. Do not close it. */
  public KubernetesClient adminClient() {
    return adminClient;
  }

  /** Stops kube-apiserver and etcd and deletes the work directory. Idempotent. */
  public synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    if (adminClient != null) {
      adminClient.close();
    }
    safeStop();
  }

  private void safeStop() {
    safeStop(server, workDir);
  }

  private static void safeStop(KubeAPIServer server, Path workDir) {
    try {
      server.stop();
    } catch (RuntimeException e) {
      LOG.warn("Stopping kube-apiserver failed", e);
    } finally {
      deleteRecursively(workDir);
    }
  }

  /**
   * Lays out {@code <work>/k8s/<version>-linux-amd64/} as kube-api-test expects: links to kube-apiserver and
   * kubectl, and an etcd wrapper that rewrites kube-api-test's {@code http://0.0.0.0:<port>} URLs to 127.0.0.1.
   */
  private static Path createWorkDir(Path binDir, boolean restartable) {
    try {
      Path work = Files.createTempDirectory("ipam-kube-api-");
      Path versionDir = Files.createDirectories(work.resolve("k8s").resolve(binDir.getFileName()));
      Files.createSymbolicLink(versionDir.resolve("kubectl"), binDir.resolve("kubectl").toRealPath());
      long jvm = ProcessHandle.current().pid();
      String apiserver = binDir.resolve("kube-apiserver").toRealPath().toString();
      String etcd = binDir.resolve("etcd").toRealPath().toString();
      writeExecutable(versionDir.resolve("kube-apiserver"), "#!/bin/sh\n"
          + "# Written by org.ipamoperators.testsupport.kube.KubeApiServer: stop with the test JVM.\n"
          + (restartable ? RestartableProcess.scriptBody(jvm, work, "kube-apiserver", apiserver)
              : OrphanGuard.scriptBody(jvm, apiserver)));
      writeExecutable(versionDir.resolve("etcd"), etcdWrapper(restartable
          ? RestartableProcess.scriptBody(jvm, work, "etcd", etcd) : OrphanGuard.scriptBody(jvm, etcd)));
      return work;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot prepare a work directory for kube-apiserver", e);
    }
  }

  static String etcdWrapper(String guardedStart) {
    return "#!/bin/sh\n"
        + "# Written by org.ipamoperators.testsupport.kube.KubeApiServer: keep etcd on the loopback interface\n"
        + "# and stop it with the test JVM.\n"
        + "n=$#\n"
        + "for a in \"$@\"; do\n"
        + "  case \"$a\" in http://0.0.0.0:*) a=\"http://127.0.0.1:${a#http://0.0.0.0:}\" ;; esac\n"
        + "  set -- \"$@\" \"$a\"\n"
        + "done\n"
        + "shift \"$n\"\n"
        + guardedStart;
  }

  private static void writeExecutable(Path file, String script) throws IOException {
    Files.writeString(file, script, StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  /** Built from the files kube-api-test wrote, not from its kubeconfig, so nothing of ~/.kube or the environment leaks in. */
  private static Config clientConfig(Path workDir, String url) {
    return new ConfigBuilder(Config.empty())
        .withMasterUrl(url)
        .withCaCertFile(workDir.resolve("apiserver.crt").toString())
        .withClientCertFile(workDir.resolve("client.crt").toString())
        .withClientKeyFile(workDir.resolve("client.key").toString())
        .withClientKeyAlgo("RSA")
        .withNamespace("default")
        .withRequestTimeout(30_000)
        .withConnectionTimeout(10_000)
        .withHttpsProxy(null)
        .withHttpProxy(null)
        .build();
  }

  private static void deleteRecursively(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      LOG.warn("Cannot delete {}", dir, e);
    }
  }
}
