package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.ipamoperators.cli.operator.OperatorCommand;
import picocli.CommandLine;

/**
 * {@code ipam operator ...} run in-process on its own thread, as {@code main} would run it, with
 * its output captured; {@link #close} stops it like SIGTERM does.
 */
public final class OperatorRun implements AutoCloseable {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  final OperatorCommand command;
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();
  private final CompletableFuture<Integer> exit = new CompletableFuture<>();
  private final List<String> args;

  private OperatorRun(String... args) {
    this.args = List.of(args);
    CommandLine cl = IpamCommand.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    command = cl.getSubcommands().get("operator").getCommand();
    Thread t = new Thread(() -> {
      try {
        exit.complete(cl.execute(args));
      } catch (Throwable e) {
        exit.completeExceptionally(e);
      }
    }, "ipam-operator-" + Integer.toHexString(System.identityHashCode(this)));
    t.setDaemon(true);
    t.start();
  }

  /** Starts {@code ipam ARGS...}; the first argument is normally {@code operator}. */
  static OperatorRun start(String... args) {
    return new OperatorRun(args);
  }

  /** The port its {@code --http-port} argument names (/metrics, probes). */
  int httpPort() {
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.startsWith("--http-port=")) {
        return Integer.parseInt(a.substring("--http-port=".length()));
      }
      if (a.equals("--http-port") && i + 1 < args.size()) {
        return Integer.parseInt(args.get(i + 1));
      }
    }
    throw new IllegalStateException("no --http-port in " + args);
  }

  /** Common arguments for a test run against the test apiserver. */
  static List<String> args(Path kubeconfig, int port, String namespace, String... more) {
    List<String> a = new ArrayList<>(List.of("operator", "--controllers", "egressip",
        "--kubeconfig", kubeconfig.toString(), "--http-port", Integer.toString(port),
        "--bind-address", "127.0.0.1", "--namespace", namespace));
    a.addAll(Arrays.asList(more));
    return a;
  }

  static Path writeKubeconfig(Path dir, String yaml) throws IOException {
    Path file = dir.resolve("kubeconfig-" + System.nanoTime() + ".yaml");
    Files.writeString(file, yaml, StandardCharsets.UTF_8);
    return file;
  }

  Integer awaitExit(Duration timeout) throws Exception {
    try {
      return exit.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("ipam " + args + " did not exit within " + timeout + "; stderr: " + err, e);
    }
  }

  boolean exited() {
    return exit.isDone();
  }

  String err() {
    return err.toString();
  }

  String out() {
    return out.toString();
  }

  /** Stops the run as SIGTERM would and expects a clean exit. */
  @Override
  public void close() throws Exception {
    command.stop();
    Integer code = awaitExit(Duration.ofSeconds(60));
    assertThat(code).as("exit status; stderr: %s", err).isZero();
  }

  /** Waits until /readyz answers 200 with this body; fails at once, with stderr, if the run exits. */
  void awaitReady(int port, String body) {
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).ignoreExceptions()
        .failFast(this::assertRunning)
        .untilAsserted(() -> assertThat(get(port, "/readyz")).isEqualTo(new Response(200, body)));
  }

  /** Fails with stderr when the run has exited. */
  void assertRunning() {
    assertThat(exited()).as("ipam operator exited; stderr: %s", err).isFalse();
  }

  record Response(int status, String body) {}

  static Response get(int port, String path) throws IOException, InterruptedException {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
    return new Response(r.statusCode(), r.body());
  }

  /** -1 when nothing listens on the port any more. */
  public static int statusOrRefused(int port, String path) throws InterruptedException {
    try {
      return get(port, path).status();
    } catch (ConnectException e) {
      return -1;
    } catch (IOException e) {
      return -1;
    }
  }
}
