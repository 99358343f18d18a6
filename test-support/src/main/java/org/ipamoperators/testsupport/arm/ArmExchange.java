package org.ipamoperators.testsupport.arm;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * One HTTP exchange: the request read and recorded, routed, any error turned into ARM's error body
 * (reworded when a test asked), and ARM's response headers added.
 */
final class ArmExchange {
  private final ArmState state;
  private final ArmRouter router;
  private final FaultsAndThrottling limits;
  private final List<ArmServer.Request> requests = Collections.synchronizedList(new ArrayList<>());

  ArmExchange(ArmState state, ArmRouter router, FaultsAndThrottling limits) {
    this.state = state;
    this.router = router;
    this.limits = limits;
  }

  List<ArmServer.Request> requests() {
    synchronized (requests) {
      return List.copyOf(requests);
    }
  }

  void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String method = ex.getRequestMethod();
      String raw = ex.getRequestURI().getRawPath();
      String rawQuery = ex.getRequestURI().getRawQuery();
      String pathAndQuery = raw + (rawQuery == null ? "" : "?" + rawQuery);
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      Map<String, String> headers = new TreeMap<>();
      ex.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), String.join(",", v)));
      Answer a = answer(method, raw, rawQuery, headers, body);
      requests.add(new ArmServer.Request(method, pathAndQuery, headers, body, a.status()));
      respond(ex, headers, a);
    }
  }

  private Answer answer(String method, String raw, String rawQuery, Map<String, String> headers, String body) {
    try {
      return router.dispatch(method, raw, query(rawQuery), headers, body);
    } catch (ArmError e) {
      String other;
      synchronized (state) {
        other = state.settings.rewordings.get(e.code);
      }
      return (other == null ? e : e.reworded(other)).answer();
    } catch (RuntimeException e) {
      return new ArmError(500, "InternalServerError", "fake ARM server: " + e).answer();
    }
  }

  private void respond(HttpExchange ex, Map<String, String> headers, Answer a) throws IOException {
    ex.getResponseHeaders().add("x-ms-request-id", UUID.randomUUID().toString());
    ex.getResponseHeaders().add("x-ms-correlation-request-id", UUID.randomUUID().toString());
    ex.getResponseHeaders().add("x-ms-routing-request-id", "EASTUS:FAKE");
    if (headers.containsKey("x-ms-client-request-id")) {
      ex.getResponseHeaders().add("x-ms-client-request-id", headers.get("x-ms-client-request-id"));
    }
    synchronized (state) {
      ex.getResponseHeaders().add("x-ms-ratelimit-remaining-subscription-reads",
          String.valueOf((int) limits.reads.tokens));
      ex.getResponseHeaders().add("x-ms-ratelimit-remaining-subscription-writes",
          String.valueOf((int) limits.writes.tokens));
    }
    a.headers().forEach((k, v) -> ex.getResponseHeaders().add(k, v));
    byte[] bytes = a.body() == null ? new byte[0] : ArmServer.JSON.writeValueAsBytes(a.body());
    if (a.body() != null) {
      ex.getResponseHeaders().add("Content-Type", "application/json; charset=utf-8");
    }
    ex.sendResponseHeaders(a.status(), bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) {
      ex.getResponseBody().write(bytes);
    }
  }

  /** A query string or form body, decoded, with lower-case names. */
  static Map<String, String> query(String raw) {
    Map<String, String> out = new LinkedHashMap<>();
    if (raw == null) {
      return out;
    }
    for (String part : raw.split("&")) {
      int eq = part.indexOf('=');
      String k = eq < 0 ? part : part.substring(0, eq);
      String v = eq < 0 ? "" : part.substring(eq + 1);
      out.put(URLDecoder.decode(k, StandardCharsets.UTF_8).toLowerCase(Locale.ROOT),
          URLDecoder.decode(v, StandardCharsets.UTF_8));
    }
    return out;
  }
}
