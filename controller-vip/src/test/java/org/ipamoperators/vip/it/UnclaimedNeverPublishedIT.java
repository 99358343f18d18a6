package org.ipamoperators.vip.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.VipControllers;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, the first hole on its own: every claim the operator makes is refused with a 409 "held
 * by another", and its informer never shows a claim. A real API server answers; the operator's
 * client only has its IPClaim requests bent on the way (creates become a create of a claim that
 * exists, reads read that claim, lists and watches select nothing). Whatever it plans, the Service
 * must never show an address: it holds none. (Before the fix, after its 20 attempts the controller
 * published a 21st address that nobody had claimed.)
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipgroups.paas.org-v1.yml"})
class UnclaimedNeverPublishedIT {
  private static final String CLAIMS = "/apis/ipam.ipamoperators.org/v1alpha1/ipclaims";
  private static final String DECOY = "203.0.113.250";

  /** Bends the operator's IPClaim requests towards one claim held by someone else. */
  private static final class EveryClaimTaken implements Interceptor {
    final AtomicInteger creates = new AtomicInteger();
    private final byte[] decoy;

    EveryClaimTaken(IPClaim decoy) {
      IPClaim copy = IPClaim.of(decoy.getMetadata().getName(), decoy.getSpec(), Map.of());
      this.decoy = Serialization.asJson(copy).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Override
    public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
      URI u = request.uri();
      String path = u.getPath();
      if (!path.startsWith(CLAIMS)) {
        return;
      }
      if (path.equals(CLAIMS) && "POST".equals(request.method())) {
        creates.incrementAndGet();
        ((HttpRequest.Builder) builder).post("application/json", decoy);
      } else if (path.equals(CLAIMS) && "GET".equals(request.method())) {
        String q = u.getRawQuery() == null ? "" : u.getRawQuery() + "&";
        builder.uri(URI.create(u.getScheme() + "://" + u.getRawAuthority() + path + "?" + q
            + "labelSelector=ipam-test%2Fnever%3Dshown"));
      } else if (path.startsWith(CLAIMS + "/") && "GET".equals(request.method())) {
        builder.uri(URI.create(u.getScheme() + "://" + u.getRawAuthority() + CLAIMS + "/" + DECOY));
      }
    }
  }

  @Test
  void aServiceWhoseClaimsAreAllRefusedNeverShowsAnAddress(KubeApiServer server, KubernetesClient client)
      throws Exception {
    IPClaim decoy = client.resource(IPClaim.of(DECOY, new IPClaimSpec(DECOY, "egressipam/elsewhere",
        new ClaimOwner("egressip", "Namespace", null, "someone-else", null)), Map.of())).create();
    VipCluster cluster = new VipCluster(client);
    cluster.groupOf("refused", List.of("198.18.200.0/24"), null, null);
    cluster.create(cluster.lb("web"));
    EveryClaimTaken bend = new EveryClaimTaken(decoy);
    KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(server.clientConfig())
        .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("every-claim-taken", bend)).build();
    Operator operator = new Operator(o -> o.withKubernetesClient(operatorClient).withCloseClientOnStop(true));
    VipControllers.register(operator, operatorClient, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    operator.start();
    try {
      long deadline = System.nanoTime() + 60_000_000_000L;
      boolean gaveUp = false;
      while (System.nanoTime() < deadline && !gaveUp) {
        assertThat(cluster.ingress("web")).as("ingress of a Service that holds no claim").isEmpty();
        var c = cluster.condition("web");
        gaveUp = c != null && "False".equals(c.getStatus()) && bend.creates.get() >= 20;
        Thread.sleep(50);
      }
      assertThat(gaveUp).as("the Service reports that it could not claim an address").isTrue();
      Thread.sleep(1000);
      assertThat(cluster.ingress("web")).isEmpty();
      assertThat(cluster.condition("web").getReason()).isEqualTo("AddressUnavailable");
      assertThat(client.resources(IPClaim.class).list().getItems()).extracting(x -> x.getMetadata().getName())
          .containsExactly(DECOY);
    } finally {
      operator.stop();
      cluster.close();
    }
  }
}
