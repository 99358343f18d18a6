package org.ipamoperators.testsupport.kube;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.internal.CertUtils;
import io.fabric8.kubernetes.client.internal.SSLUtils;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A loopback HTTPS proxy between a client and the test kube-apiserver that injects the faults a
 * busy or failing control plane shows: 429 with Retry-After, 500, 409 on writes, slow answers, reset
 * connections and watches cut mid-stream. Faults are drawn from a seeded {@link Random}, each with its
 * own rate, and counted; everything else is forwarded unchanged. It presents the apiserver's own
 * serving certificate, so a client keeps its kubeconfig and only the port changes
 * ({@link #kubeconfig()}); upstream it authenticates as the cluster admin.
 */
public final class ApiFaultProxy implements AutoCloseable {
  /** The faults, each drawn per request (watch cuts per watch). */
  public enum Fault { THROTTLE, SERVER_ERROR, CONFLICT, SLOW, RESET, WATCH_CUT }

  private static final Set<String> HOP = Set.of("host", "connection", "content-length", "expect", "upgrade",
      "transfer-encoding", "keep-alive");
  private final KubeApiServer server;
  private final HttpsServer https;
  private final HttpClient upstream;
  private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "api-fault-proxy");
    t.setDaemon(true);
    return t;
  });
  private final java.util.concurrent.ScheduledExecutorService cutter =
      Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "api-fault-proxy-cutter");
        t.setDaemon(true);
        return t;
      });
  private final Random random;
  private final Map<Fault, Double> rates = new ConcurrentHashMap<>();
  private final Map<Fault, AtomicLong> injected = new ConcurrentHashMap<>();
  private final AtomicLong forwarded = new AtomicLong();
  private volatile boolean enabled = true;
  private volatile boolean watchesSilenced;
  private final Set<InputStream> openWatches = ConcurrentHashMap.newKeySet();

  public ApiFaultProxy(KubeApiServer server, long seed) throws Exception {
    this.server = server;
    this.random = new Random(seed);
    for (Fault f : Fault.values()) {
      injected.put(f, new AtomicLong());
      rates.put(f, 0.0);
    }
    Path dir = server.certificateDir();
    Config admin = server.clientConfig();
    SSLContext up = SSLContext.getInstance("TLS");
    up.init(SSLUtils.keyManagers(admin), SSLUtils.trustManagers(admin), null);
    this.upstream = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(up)
        .connectTimeout(Duration.ofSeconds(5)).executor(executor).build();
    KeyStore ks;
    try (InputStream cert = Files.newInputStream(dir.resolve("apiserver.crt"));
        InputStream key = Files.newInputStream(dir.resolve("apiserver.key"))) {
      ks = CertUtils.createKeyStore(cert, key, "RSA", "changeit".toCharArray(), null, "changeit".toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, "changeit".toCharArray());
    SSLContext down = SSLContext.getInstance("TLS");
    down.init(kmf.getKeyManagers(), null, null);
    https = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    https.setHttpsConfigurator(new HttpsConfigurator(down));
    https.setExecutor(executor);
    https.createContext("/", this::handle);
    https.start();
  }

  /** Sets the rate (0..1) at which a fault is drawn. */
  public ApiFaultProxy rate(Fault fault, double rate) {
    rates.put(fault, rate);
    return this;
  }

  /** Stops or resumes injecting (everything is forwarded while stopped), e.g. to let a run converge. */
  public void inject(boolean on) {
    enabled = on;
  }

  /**
   * Silences every watch through this proxy, open or new: the streams stay open but carry nothing, so the client's
   * caches go stale without any error (a replica cut off from events, not from the API). Lists, gets and writes
   * still pass. Unsilencing ends the open watches, as a healed partition would, so the client lists again.
   */
  public void silenceWatches(boolean silenced) {
    watchesSilenced = silenced;
    if (!silenced) {
      for (InputStream in : openWatches) {
        try {
          in.close();
        } catch (IOException ignored) {
          // already closed
        }
      }
    }
  }

  public Map<Fault, Long> injected() {
    Map<Fault, Long> out = new java.util.EnumMap<>(Fault.class);
    injected.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  public long forwarded() {
    return forwarded.get();
  }

  public String url() {
    return "https://127.0.0.1:" + https.getAddress().getPort();
  }

  /** The apiserver's admin kubeconfig pointed at this proxy. */
  public String kubeconfig() {
    // The kubeconfig names the server as kube-api-test wrote it (host and port may be spelled differently).
    return server.kubeconfig().replaceAll("(?m)^(\\s*server:\\s*)\\S+\\s*$", "$1" + url());
  }

  private boolean draw(Fault f) {
    if (!enabled) {
      return false;
    }
    double rate = rates.get(f);
    boolean hit;
    synchronized (random) {
      hit = rate > 0 && random.nextDouble() < rate;
    }
    if (hit) {
      injected.get(f).incrementAndGet();
    }
    return hit;
  }

  private int drawInt(int bound) {
    synchronized (random) {
      return random.nextInt(bound);
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    try {
      String method = ex.getRequestMethod();
      String query = ex.getRequestURI().getRawQuery();
      boolean watch = query != null && query.contains("watch=true");
      if (ex.getRequestHeaders().containsKey("Upgrade")) {
        // No WebSockets through this proxy: fabric8 then watches over a streamed HTTP response (a 503 on the
        // upgrade is its documented fallback), which the proxy can cut.
        status(ex, 503, "ServiceUnavailable", "no websocket upgrades through the test proxy");
        return;
      }
      if (draw(Fault.RESET)) {
        ex.getRequestBody().readAllBytes();
        ex.close(); // no answer at all: the client sees the connection end
        return;
      }
      if (draw(Fault.THROTTLE)) {
        ex.getResponseHeaders().add("Retry-After", "1");
        status(ex, 429, "TooManyRequests", "injected: too many requests, please try again later");
        return;
      }
      if (draw(Fault.SERVER_ERROR)) {
        status(ex, 500, "InternalError", "injected: an error on the server has prevented the request from succeeding");
        return;
      }
      if (!"GET".equals(method) && draw(Fault.CONFLICT)) {
        status(ex, 409, "Conflict", "injected: the object has been modified; please apply your changes to the latest version and try again");
        return;
      }
      if (draw(Fault.SLOW)) {
        Thread.sleep(200 + drawInt(1800));
      }
      forward(ex, watch);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ex.close();
    } catch (IOException | RuntimeException e) {
      ex.close();
    }
  }

  private void forward(HttpExchange ex, boolean watch) throws IOException, InterruptedException {
    String base = server.url().endsWith("/") ? server.url().substring(0, server.url().length() - 1) : server.url();
    URI target = URI.create(base + ex.getRequestURI().toString());
    byte[] body = ex.getRequestBody().readAllBytes();
    HttpRequest.Builder b = HttpRequest.newBuilder(target).method(ex.getRequestMethod(),
        body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    ex.getRequestHeaders().forEach((k, vs) -> {
      if (!HOP.contains(k.toLowerCase(java.util.Locale.ROOT)) && !k.equalsIgnoreCase("authorization")) {
        vs.forEach(v -> b.header(k, v));
      }
    });
    if (!watch) {
      b.timeout(Duration.ofSeconds(60));
    }
    HttpResponse<InputStream> resp = upstream.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
    forwarded.incrementAndGet();
    resp.headers().map().forEach((k, vs) -> {
      if (!HOP.contains(k.toLowerCase(java.util.Locale.ROOT)) && !k.startsWith(":")) {
        ex.getResponseHeaders().put(k, vs);
      }
    });
    try (InputStream in = resp.body()) {
      if (!watch) {
        byte[] bytes = in.readAllBytes();
        ex.sendResponseHeaders(resp.statusCode(), bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
          ex.getResponseBody().write(bytes);
        }
        ex.close();
        return;
      }
      streamWatch(ex, resp.statusCode(), in);
    }
  }

  /** A watch's events as they come, cut at a drawn moment (a watch cut) and dropped while watches are silenced. */
  private void streamWatch(HttpExchange ex, int status, InputStream in) throws IOException {
    if (draw(Fault.WATCH_CUT)) {
      // The watch ends mid-stream, as when a load balancer or the apiserver drops it, idle or not.
      cutter.schedule(() -> {
        try {
          in.close();
        } catch (IOException ignored) {
          // already closed
        }
      }, 500 + drawInt(5000), java.util.concurrent.TimeUnit.MILLISECONDS);
    }
    ex.sendResponseHeaders(status, 0);
    OutputStream out = ex.getResponseBody();
    byte[] buf = new byte[8192];
    int n;
    openWatches.add(in);
    try {
      while ((n = in.read(buf)) >= 0) {
        if (watchesSilenced) {
          continue; // events (and bookmarks) dropped: the client hears nothing
        }
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException cut) {
      // cut by the schedule above, by the end of a silence, or the client went away
    } finally {
      openWatches.remove(in);
    }
    ex.close();
  }

  private static void status(HttpExchange ex, int code, String reason, String message) throws IOException {
    ex.getRequestBody().readAllBytes();
    byte[] json = ("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\""
        + message + "\",\"reason\":\"" + reason + "\",\"code\":" + code + "}").getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().put("Content-Type", List.of("application/json"));
    ex.sendResponseHeaders(code, json.length);
    ex.getResponseBody().write(json);
    ex.close();
  }

  @Override
  public void close() {
    https.stop(0);
    cutter.shutdownNow();
    executor.shutdownNow();
  }
}
