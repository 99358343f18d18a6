package org.ipamoperators.testsupport.moto;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback HTTP proxy in front of moto that answers chosen EC2 calls with throttling or 5xx
 * errors a given number of times, then lets them through: moto itself never throttles. Point a
 * client's endpoint at {@link #endpoint()}; requests that draw no fault are forwarded unchanged.
 *
 * <p>Besides those counted rules, {@link #chaos} draws a fault for every call from a seeded {@link Random} (the
 * same seed draws the same sequence of faults for the same sequence of calls): the error answers above, slow
 * answers, connections reset before the call reaches EC2, and answers lost after EC2 did the work (a client
 * cannot tell whether the call happened). Every fault drawn is counted per kind ({@link #counts}).
 */
public final class FaultProxy implements AutoCloseable {
  public enum Fault {
    /** What EC2 answers when the account's request rate is exceeded. */
    THROTTLE(503, "RequestLimitExceeded", "Request limit exceeded."),
    UNAVAILABLE(503, "Unavailable", "The server is overloaded and can't handle the request."),
    INTERNAL(500, "InternalError", "An internal error has occurred."),
    /** Forwarded after a pause of 0.2 to 2 s (chaos only). */
    SLOW(0, null, null),
    /** The connection is closed before the call reaches EC2: no answer at all (chaos only). */
    RESET(0, null, null),
    /** Forwarded, EC2 does the work, and the connection is closed instead of answering (chaos only). */
    LOST_ANSWER(0, null, null);

    final int status;
    final String code;
    final String message;

    Fault(int status, String code, String message) {
      this.status = status;
      this.code = code;
      this.message = message;
    }
  }

  private record Rule(String action, String bodyContains, Fault fault, AtomicInteger left) {}

  private static final Set<String> RESTRICTED = Set.of("host", "connection", "content-length", "expect", "upgrade",
      "transfer-encoding");
  private final HttpServer server;
  private final URI target;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final List<Rule> rules = Collections.synchronizedList(new ArrayList<>());
  private final List<String> injected = Collections.synchronizedList(new ArrayList<>());
  private final List<String> forwarded = Collections.synchronizedList(new ArrayList<>());
  private final Map<Fault, AtomicLong> counts = new EnumMap<>(Fault.class);
  private volatile Chaos chaos;

  /** Seeded faults for every call: each kind with its own rate, drawn in order (at most one per call). */
  private record Chaos(Random random, Map<Fault, Double> rates) {}

  public FaultProxy(URI target) throws IOException {
    this.target = target;
    this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    for (Fault f : Fault.values()) {
      counts.put(f, new AtomicLong());
    }
    server.createContext("/", this::handle);
    // Calls are answered concurrently, as EC2 does: a slow answer holds up only its own call.
    server.setExecutor(Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "moto-fault-proxy");
      t.setDaemon(true);
      return t;
    }));
    server.start();
  }

  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  /** The next {@code times} calls of {@code action} whose body contains {@code bodyContains} get the fault. */
  public FaultProxy inject(String action, String bodyContains, Fault fault, int times) {
    rules.add(new Rule(action, bodyContains, fault, new AtomicInteger(times)));
    return this;
  }

  /**
   * From now on every call draws a fault from {@code rates} (kind to rate, 0..1) with a {@link Random} of this
   * seed, until {@link #calm}. Counted rules ({@link #inject}) still come first.
   */
  public FaultProxy chaos(long seed, Map<Fault, Double> rates) {
    chaos = new Chaos(new Random(seed), new EnumMap<>(rates));
    return this;
  }

  /** Stops the seeded faults: everything not matched by a counted rule is forwarded again. */
  public void calm() {
    chaos = null;
  }

  /** Faults injected so far per kind, counted rules and chaos together. */
  public Map<Fault, Long> counts() {
    Map<Fault, Long> out = new EnumMap<>(Fault.class);
    counts.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  public List<String> injected() {
    synchronized (injected) {
      return List.copyOf(injected);
    }
  }

  public List<String> forwarded() {
    synchronized (forwarded) {
      return List.copyOf(forwarded);
    }
  }

  public boolean allFaultsUsed() {
    synchronized (rules) {
      return rules.stream().allMatch(r -> r.left().get() <= 0);
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      byte[] body = ex.getRequestBody().readAllBytes();
      String form = new String(body, StandardCharsets.UTF_8);
      String action = action(form);
      Fault fault = ruleFault(action, form);
      if (fault == null) {
        fault = drawChaos();
      }
      if (fault == Fault.SLOW) {
        counted(action, fault);
        Thread.sleep(200 + drawInt(1800));
        fault = null;
      } else if (fault == Fault.RESET) {
        counted(action, fault);
        return; // closed by try-with-resources with nothing sent: the client sees the connection end
      }
      if (fault != null && fault != Fault.LOST_ANSWER) {
        counted(action, fault);
        sendError(ex, fault);
        return;
      }
      forward(ex, body, action, fault == Fault.LOST_ANSWER);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The fault of the first rule left for this action (and body), used up by one. */
  private Fault ruleFault(String action, String form) {
    synchronized (rules) {
      for (Rule r : rules) {
        if (r.action().equals(action) && (r.bodyContains() == null || form.contains(r.bodyContains()))
            && r.left().get() > 0) {
          r.left().decrementAndGet();
          return r.fault();
        }
      }
    }
    return null;
  }

  /** The fault as EC2 answers an error: its status and XML. */
  private static void sendError(HttpExchange ex, Fault fault) throws IOException {
    byte[] xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>" + fault.code
        + "</Code><Message>" + fault.message + "</Message></Error></Errors><RequestID>fault-proxy</RequestID>"
        + "</Response>").getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "text/xml");
    ex.sendResponseHeaders(fault.status, xml.length);
    ex.getResponseBody().write(xml);
  }

  /** Passes the call on to moto and its answer back, or drops the answer when {@code loseAnswer}. */
  private void forward(HttpExchange ex, byte[] body, String action, boolean loseAnswer)
      throws IOException, InterruptedException {
    forwarded.add(action);
    HttpRequest.Builder b = HttpRequest.newBuilder(target.resolve(ex.getRequestURI().toString()))
        .method(ex.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
    ex.getRequestHeaders().forEach((k, vs) -> {
      if (!RESTRICTED.contains(k.toLowerCase())) {
        vs.forEach(v -> b.header(k, v));
      }
    });
    HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    if (loseAnswer) {
      counted(action, Fault.LOST_ANSWER);
      return; // EC2 did it; the answer never reaches the client
    }
    r.headers().map().forEach((k, vs) -> {
      if (!RESTRICTED.contains(k.toLowerCase()) && !k.startsWith(":")) {
        vs.forEach(v -> ex.getResponseHeaders().add(k, v));
      }
    });
    ex.sendResponseHeaders(r.statusCode(), r.body().length == 0 ? -1 : r.body().length);
    ex.getResponseBody().write(r.body());
  }

  private void counted(String action, Fault fault) {
    injected.add(action + ":" + (fault.code == null ? fault.name() : fault.code));
    counts.get(fault).incrementAndGet();
  }

  private Fault drawChaos() {
    Chaos c = chaos;
    if (c == null) {
      return null;
    }
    synchronized (c.random()) {
      for (Fault f : Fault.values()) {
        Double rate = c.rates().get(f);
        if (rate != null && rate > 0 && c.random().nextDouble() < rate) {
          return f;
        }
      }
    }
    return null;
  }

  private int drawInt(int bound) {
    Chaos c = chaos;
    Random r = c == null ? new Random() : c.random();
    synchronized (r) {
      return r.nextInt(bound);
    }
  }

  private static String action(String form) {
    for (String part : form.split("&")) {
      if (part.startsWith("Action=")) {
        return URLDecoder.decode(part.substring(7), StandardCharsets.UTF_8);
      }
    }
    return "";
  }

  @Override
  public void close() {
    chaos = null;
    server.stop(0);
  }
}
