package org.ipamoperators.egressip.network;

import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A tiny API server on 127.0.0.1 that answers fixed paths and fails the others with a status the
 * test sets: enough to see what the detectors do when a GET fails.
 */
final class FlakyApi implements AutoCloseable {
  private final HttpServer server;
  final Map<String, String> answers = new ConcurrentHashMap<>();
  final Map<String, Integer> failing = new ConcurrentHashMap<>(); // path to the status it fails with
  volatile int failWith = 0; // 0: answer; otherwise every request gets this status

  FlakyApi() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      String path = exchange.getRequestURI().getPath();
      String body = answers.get(path);
      int fail = failWith != 0 ? failWith : failing.getOrDefault(path, 0);
      int code = fail != 0 ? fail : body == null ? 404 : 200;
      if (body == null || fail != 0) {
        body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":" + code + "}";
      }
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(code, bytes.length);
      exchange.getResponseBody().write(bytes);
      exchange.close();
    });
    server.start();
  }

  static String resources(String groupVersion, String plural, String kind) {
    return "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"" + groupVersion
        + "\",\"resources\":[{\"name\":\"" + plural + "\",\"singularName\":\"\",\"namespaced\":false,\"kind\":\""
        + kind + "\",\"verbs\":[\"get\",\"list\",\"watch\"]}]}";
  }

  KubernetesClient client() {
    return new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl(
        "http://127.0.0.1:" + server.getAddress().getPort()).withRequestRetryBackoffLimit(0)
        .withAutoConfigure(false).build()).build();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
