package org.ipamoperators.cli.demo;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.ipamoperators.cli.IpamCommand;

/**
 * The throw-away cluster {@code ipam demo} runs on: etcd and kube-apiserver from the test environment's cache
 * ({@code scripts/test-env.sh}), on 127.0.0.1 ports, in a temporary directory deleted at {@link #close()}. One
 * static token in {@code system:masters}; RBAC on. No kubelet: no pod runs.
 */
final class DemoCluster implements AutoCloseable {
  static final String VERSION = "1.34.4";
  static final String PREPARE = "scripts/test-env.sh";

  private final Path dir;
  private final List<Process> processes = new ArrayList<>();
  private final String url;
  private final String token = UUID.randomUUID().toString();
  private final Path kubeconfig;

  private DemoCluster(Path dir, String url) {
    this.dir = dir;
    this.url = url;
    this.kubeconfig = dir.resolve("kubeconfig");
  }

  /** Where {@code scripts/test-env.sh} keeps etcd, kube-apiserver and kubectl, if it ran. */
  static Optional<Path> binaries(Map<String, String> env, String userHome) {
    Path bin = binDir(env, cacheDir(env, userHome));
    boolean complete = Stream.of("etcd", "kube-apiserver", "kubectl").allMatch(b -> Files.isExecutable(bin.resolve(b)));
    return complete ? Optional.of(bin) : Optional.empty();
  }

  /** The test environment's cache ({@code IPAM_TEST_CACHE}, else the XDG cache's ipam-operators). */
  static Path cacheDir(Map<String, String> env, String userHome) {
    return Optional.ofNullable(env.get("IPAM_TEST_CACHE")).filter(s -> !s.isBlank()).map(Path::of)
        .orElseGet(() -> Optional.ofNullable(env.get("XDG_CACHE_HOME")).filter(s -> !s.isBlank()).map(Path::of)
            .orElse(Path.of(userHome, ".cache")).resolve("ipam-operators"));
  }

  /** Where the Kubernetes binaries of {@link #VERSION} are in the cache (kube-api-test's layout). */
  static Path binDir(Map<String, String> env, Path cache) {
    return Optional.ofNullable(env.get("KUBE_API_TEST_DIR")).filter(s -> !s.isBlank()).map(Path::of)
        .orElse(cache).resolve("k8s").resolve(VERSION + "-linux-amd64");
  }

  /** Starts etcd and kube-apiserver from {@code bin} and waits until the apiserver is ready. */
  static DemoCluster start(Path bin, Duration timeout) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("ipam-demo-");
    int etcdPort = freePort();
    int peerPort = freePort();
    int apiPort = freePort();
    DemoCluster cluster = new DemoCluster(dir, "https://127.0.0.1:" + apiPort);
    try {
      cluster.writeKeys();
      cluster.launch("etcd", List.of(bin.resolve("etcd").toString(), "--name", "demo", "--data-dir",
          dir.resolve("etcd").toString(), "--listen-client-urls", "http://127.0.0.1:" + etcdPort,
          "--advertise-client-urls", "http://127.0.0.1:" + etcdPort, "--listen-peer-urls",
          "http://127.0.0.1:" + peerPort, "--initial-advertise-peer-urls", "http://127.0.0.1:" + peerPort,
          "--initial-cluster", "demo=http://127.0.0.1:" + peerPort));
      cluster.launch("kube-apiserver", List.of(bin.resolve("kube-apiserver").toString(),
          "--etcd-servers", "http://127.0.0.1:" + etcdPort, "--bind-address", "127.0.0.1",
          "--advertise-address", "127.0.0.1", "--secure-port", Integer.toString(apiPort),
          "--cert-dir", dir.resolve("pki").toString(), "--token-auth-file", dir.resolve("tokens.csv").toString(),
          "--authorization-mode", "RBAC", "--service-cluster-ip-range", "203.0.113.0/24",
          "--service-account-issuer", "https://kubernetes.default.svc",
          "--service-account-key-file", dir.resolve("sa.pub").toString(),
          "--service-account-signing-key-file", dir.resolve("sa.key").toString(),
          "--endpoint-reconciler-type", "none", "--profiling=false"));
      cluster.writeKubeconfig();
      cluster.awaitReady(bin, timeout);
      return cluster;
    } catch (IOException | InterruptedException | RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  String url() {
    return url;
  }

  Path kubeconfig() {
    return kubeconfig;
  }

  Config clientConfig() {
    return new ConfigBuilder(Config.empty()).withMasterUrl(url).withOauthToken(token).withTrustCerts(true)
        .withNamespace("default").build();
  }

  Path logs() {
    return dir.resolve("logs");
  }

  private void writeKeys() throws IOException {
    KeyPair keys;
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
      generator.initialize(2048);
      keys = generator.generateKeyPair();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    Files.writeString(dir.resolve("sa.key"), pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
    Files.writeString(dir.resolve("sa.pub"), pem("PUBLIC KEY", keys.getPublic().getEncoded()));
    Files.writeString(dir.resolve("tokens.csv"), token + ",demo-admin,demo-admin,\"system:masters\"\n");
    Files.createDirectories(dir.resolve("logs"));
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
        .encodeToString(der) + "\n-----END " + type + "-----\n";
  }

  /** A kubeconfig for kubectl; the apiserver's certificate is its own self-signed one, hence no CA check. */
  private void writeKubeconfig() throws IOException {
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        clusters: [{name: demo, cluster: {server: "%s", insecure-skip-tls-verify: true}}]
        users: [{name: demo-admin, user: {token: "%s"}}]
        contexts: [{name: demo, context: {cluster: demo, user: demo-admin}}]
        current-context: demo
        """.formatted(url, token));
  }

  private void launch(String name, List<String> command) throws IOException {
    processes.add(new ProcessBuilder(command)
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
        .redirectErrorStream(true).redirectOutput(logs().resolve(name + ".log").toFile()).start());
  }

  /** Also used for the controllers, so that {@link #close()} stops them first. */
  Process launchJava(String name, List<String> args) throws IOException {
    List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
        "-cp", System.getProperty("java.class.path"), IpamCommand.class.getName()));
    command.addAll(args);
    Process process = new ProcessBuilder(command)
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
        .redirectErrorStream(true).redirectOutput(logs().resolve(name + ".log").toFile()).start();
    processes.add(process);
    return process;
  }

  private void awaitReady(Path bin, Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      for (Process p : processes) {
        if (!p.isAlive()) {
          throw new IllegalStateException("a demo cluster process exited; see " + logs());
        }
      }
      Process check = new ProcessBuilder(bin.resolve("kubectl").toString(), "--kubeconfig", kubeconfig.toString(),
          "get", "--raw", "/readyz").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (check.waitFor(10, TimeUnit.SECONDS) && check.exitValue() == 0) {
        return;
      }
      check.destroyForcibly();
      Thread.sleep(300);
    }
    throw new IllegalStateException("kube-apiserver not ready within " + timeout + "; see " + logs());
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  /** Stops the controllers, then kube-apiserver, then etcd (reverse order), and deletes the directory. */
  @Override
  public void close() {
    for (int i = processes.size() - 1; i >= 0; i--) {
      Process p = processes.get(i);
      p.destroy();
      try {
        if (!p.waitFor(15, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
