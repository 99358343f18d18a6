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
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback HTTP proxy in front of moto that answers chosen EC2 calls with throttling or 5xx
 * errors a given number of times, then lets them through: moto itself never throttles. Point a
 * client's endpoint at {@link #endpoint()}; requests that draw no fault are forwarded unchanged.
 */
public final class FaultProxy implements AutoCloseable {
  public enum Fault {
    /** What EC2 answers when the account's request rate is exceeded. */
    THROTTLE(503, "RequestLimitExceeded", "Request limit exceeded."),
    UNAVAILABLE(503, "Unavailable", "The server is overloaded and can't handle the request."),
    INTERNAL(500, "InternalError", "An internal error has occurred.");

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

  public FaultProxy(URI target) throws IOException {
    this.target = target;
    this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::handle);
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
      Fault fault = null;
      synchronized (rules) {
        for (Rule r : rules) {
          if (r.action().equals(action) && (r.bodyContains() == null || form.contains(r.bodyContains()))
              && r.left().get() > 0) {
            r.left().decrementAndGet();
            fault = r.fault();
            break;
          }
        }
      }
      if (fault != null) {
        injected.add(action + ":" + fault.code);
        byte[] xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>" + fault.code
            + "</Code><Message>" + fault.message + "</Message></Error></Errors><RequestID>fault-proxy</RequestID>"
            + "</Response>").getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "text/xml");
        ex.sendResponseHeaders(fault.status, xml.length);
        ex.getResponseBody().write(xml);
        return;
      }
      forwarded.add(action);
      HttpRequest.Builder b = HttpRequest.newBuilder(target.resolve(ex.getRequestURI().toString()))
          .method(ex.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
      ex.getRequestHeaders().forEach((k, vs) -> {
        if (!RESTRICTED.contains(k.toLowerCase())) {
          vs.forEach(v -> b.header(k, v));
        }
      });
      HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
      r.headers().map().forEach((k, vs) -> {
        if (!RESTRICTED.contains(k.toLowerCase()) && !k.startsWith(":")) {
          vs.forEach(v -> ex.getResponseHeaders().add(k, v));
        }
      });
      ex.sendResponseHeaders(r.statusCode(), r.body().length == 0 ? -1 : r.body().length);
      ex.getResponseBody().write(r.body());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
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
    server.stop(0);
  }
}
