package org.ipamoperators.controller.common.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.ipamoperators.controller.common.ids.ClusterIdLedger;
import org.ipamoperators.controller.common.ids.IdSpace;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Review M9: a create answered 409 whose claim is gone when read (someone keeps creating and
 * deleting it) is retried by one rule in both ledgers, {@link ClaimAttempts#MAX} creates, then a
 * clear error. The API server here is a loopback script that answers exactly that, forever: a real
 * one cannot be made to lose that race on every attempt. (ClusterLedger recursed without bound.)
 */
class ClaimAttemptsTest {
  private HttpServer server;
  private KubernetesClient client;
  private final AtomicInteger creates = new AtomicInteger();

  @BeforeEach
  void start() throws Exception {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", ex -> {
      boolean create = "POST".equals(ex.getRequestMethod());
      if (create) {
        creates.incrementAndGet();
      }
      int code = create ? 409 : 404;
      String reason = create ? "AlreadyExists" : "NotFound";
      byte[] body = ("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"" + reason
          + "\",\"code\":" + code + "}").getBytes(StandardCharsets.UTF_8);
      ex.getRequestBody().readAllBytes();
      ex.getResponseHeaders().add("Content-Type", "application/json");
      ex.sendResponseHeaders(code, body.length);
      ex.getResponseBody().write(body);
      ex.close();
    });
    server.start();
    Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + server.getAddress().getPort())
        .withRequestRetryBackoffLimit(0).build();
    client = new KubernetesClientBuilder().withConfig(config).build();
  }

  @AfterEach
  void stop() {
    client.close();
    server.stop(0);
  }

  @Test
  void anIpClaimThatKeepsVanishingIsTriedFiveTimesThenReported() {
    ClusterLedger ledger = new ClusterLedger(client);
    ClaimOwner owner = new ClaimOwner("vip", "Service", "ns", "a", null);
    assertThatThrownBy(() -> ledger.claim(Ip.parse("192.0.2.1"), "ipgroup/g", owner))
        .isInstanceOf(ClaimAttempts.ContendedException.class).hasMessageContaining("IPClaim 192.0.2.1");
    assertThat(creates).hasValue(ClaimAttempts.MAX);
  }

  @Test
  void anIdClaimThatKeepsVanishingFollowsTheSameRule() {
    ClusterIdLedger ledger = new ClusterIdLedger(client);
    ClaimOwner owner = new ClaimOwner("keepalived", "KeepalivedGroup", null, "g", null);
    assertThatThrownBy(() -> ledger.claim(IdSpace.vrrpRouterIds("default"), 7, "p", owner))
        .isInstanceOf(ClaimAttempts.ContendedException.class).hasMessageContaining("IDClaim");
    assertThat(creates).hasValue(ClaimAttempts.MAX);
  }
}
