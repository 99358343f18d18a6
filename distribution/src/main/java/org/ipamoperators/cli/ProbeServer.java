package org.ipamoperators.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One small JDK HTTP server for what the kubelet and Prometheus ask: {@code /healthz} (liveness),
 * {@code /readyz} (readiness) and {@code /metrics} (Prometheus text format). Probes answer 200 or
 * 503 with a short plain-text reason; nothing else is served.
 */
public final class ProbeServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ProbeServer.class);
  public static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  /** A probe's answer: healthy or not, and why. */
  public record Probe(boolean ok, String detail) {
    public static Probe ok(String detail) {
      return new Probe(true, detail);
    }

    public static Probe failing(String detail) {
      return new Probe(false, detail);
    }
  }

  private final HttpServer server;
  private final ExecutorService executor;

  private ProbeServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /** Binds and starts serving; an address in use or not local fails here with an {@link IOException}. */
  public static ProbeServer start(InetSocketAddress address, Supplier<Probe> liveness, Supplier<Probe> readiness,
      Supplier<String> metrics) throws IOException {
    HttpServer server = HttpServer.create(address, 16);
    AtomicInteger n = new AtomicInteger();
    ExecutorService executor = Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "ipam-http-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.createContext("/", exchange -> {
      try (exchange) {
        handle(exchange, liveness, readiness, metrics);
      } catch (IOException e) {
        LOG.debug("HTTP request {} failed", exchange.getRequestURI(), e); // the client went away
      } catch (RuntimeException e) {
        // A failing probe or scrape is ours to fix: never hidden at DEBUG.
        LOG.warn("HTTP request {} failed: {}", exchange.getRequestURI(), e.toString(), e);
      }
    });
    server.start();
    return new ProbeServer(server, executor);
  }

  private static void handle(HttpExchange exchange, Supplier<Probe> liveness, Supplier<Probe> readiness,
      Supplier<String> metrics) throws IOException {
    String method = exchange.getRequestMethod();
    if (!"GET".equals(method) && !"HEAD".equals(method)) {
      exchange.getResponseHeaders().set("Allow", "GET, HEAD");
      send(exchange, 405, "text/plain; charset=utf-8", "method not allowed\n");
      return;
    }
    switch (exchange.getRequestURI().getPath()) {
      case "/healthz" -> probe(exchange, liveness.get());
      case "/readyz" -> probe(exchange, readiness.get());
      case "/metrics" -> send(exchange, 200, PROMETHEUS_TEXT, metrics.get());
      default -> send(exchange, 404, "text/plain; charset=utf-8", "not found; try /healthz, /readyz or /metrics\n");
    }
  }

  private static void probe(HttpExchange exchange, Probe probe) throws IOException {
    send(exchange, probe.ok() ? 200 : 503, "text/plain; charset=utf-8", probe.detail() + "\n");
  }

  private static void send(HttpExchange exchange, int status, String contentType, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", contentType);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    boolean head = "HEAD".equals(exchange.getRequestMethod());
    exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
    if (!head) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }

  /** The address actually bound (the port is the real one when 0 was asked for). */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  /** Stops at once: probe and metrics answers are small and the client retries. */
  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
    try {
      executor.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
