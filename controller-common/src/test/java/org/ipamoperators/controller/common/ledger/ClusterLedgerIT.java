package org.ipamoperators.controller.common.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/** The ledger on a real API server: creation is the lock, even between separate clients. */
@KubeApiTest(crds = "META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml")
class ClusterLedgerIT {
  private static ClaimOwner ns(String name) {
    return new ClaimOwner("egressip", "Namespace", null, name, null);
  }

  @Test
  void exactlyOneOfManyConcurrentClaimantsWins(KubeApiServer server) throws Exception {
    Ip ip = Ip.parse("192.0.2.77");
    List<KubernetesClient> clients = List.of(server.newClient(), server.newClient(), server.newClient());
    ExecutorService pool = Executors.newFixedThreadPool(12);
    try {
      List<Future<ClaimResult>> results = new ArrayList<>();
      for (int i = 0; i < 24; i++) {
        ClusterLedger ledger = new ClusterLedger(clients.get(i % clients.size()));
        String owner = "ns-" + i;
        results.add(pool.submit((Callable<ClaimResult>) () -> ledger.claim(ip, "egressipam/race", ns(owner))));
      }
      int won = 0;
      String winner = null;
      for (Future<ClaimResult> f : results) {
        ClaimResult r = f.get();
        if (r.outcome() == ClaimResult.Outcome.CLAIMED) {
          won++;
          winner = r.holder().name();
        }
      }
      assertThat(won).isEqualTo(1);
      for (Future<ClaimResult> f : results) {
        ClaimResult r = f.get();
        if (r.outcome() != ClaimResult.Outcome.CLAIMED) {
          assertThat(r.outcome()).isEqualTo(ClaimResult.Outcome.HELD_BY_OTHER);
          assertThat(r.holder().name()).isEqualTo(winner);
        }
      }
    } finally {
      pool.shutdownNow();
      clients.forEach(KubernetesClient::close);
    }
  }

  @Test
  void claimingAgainIsIdempotentAndOnlyTheOwnerReleases(KubernetesClient client) {
    ClusterLedger ledger = new ClusterLedger(client);
    Ip ip = Ip.parse("2001:db8::1");
    assertThat(ledger.claim(ip, "ipgroup/v6", ns("a")).outcome()).isEqualTo(ClaimResult.Outcome.CLAIMED);
    assertThat(ledger.claim(ip, "ipgroup/v6", ns("a")).outcome()).isEqualTo(ClaimResult.Outcome.ALREADY_OURS);
    assertThat(ledger.get(ip)).hasValueSatisfying(c ->
        assertThat(c.getMetadata().getName()).isEqualTo("2001-0db8-0000-0000-0000-0000-0000-0001"));
    assertThat(ledger.release(ip, ns("b"))).isFalse();
    assertThat(ledger.get(ip)).isPresent();
    assertThat(ledger.claimsOfPool("ipgroup/v6")).hasSize(1);
    assertThat(ledger.release(ip, ns("a"))).isTrue();
    assertThat(ledger.get(ip)).isEmpty();
    assertThat(ledger.claim(ip, "ipgroup/v6", ns("b")).outcome()).isEqualTo(ClaimResult.Outcome.CLAIMED);
  }

  @Test
  void aClaimCannotBeRewrittenToAnotherOwner(KubernetesClient client) {
    ClusterLedger ledger = new ClusterLedger(client);
    Ip ip = Ip.parse("192.0.2.78");
    ledger.claim(ip, "egressipam/x", ns("a"));
    IPClaim c = ledger.get(ip).orElseThrow();
    c.setSpec(new IPClaimSpec(c.getSpec().address(), c.getSpec().pool(), ns("thief")));
    assertThatThrownBy(() -> client.resource(c).update())
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("an IPClaim cannot be changed");
  }

  /**
   * Decided in issue 13: a new owner object with an old one's name (another uid) adopts the old
   * claim, and releases it; an owner of another name does neither.
   */
  @Test
  void anOwnerRecreatedUnderTheSameNameAdoptsItsClaim(KubernetesClient client) {
    ClusterLedger ledger = new ClusterLedger(client);
    Ip ip = Ip.parse("192.0.2.79");
    ClaimOwner first = new ClaimOwner("vip", "Service", "team", "web", "uid-1");
    ClaimOwner again = new ClaimOwner("vip", "Service", "team", "web", "uid-2");
    ClaimOwner other = new ClaimOwner("vip", "Service", "team", "web2", "uid-1");
    assertThat(ledger.claim(ip, "ipgroup/g", first).outcome()).isEqualTo(ClaimResult.Outcome.CLAIMED);
    ClaimResult r = ledger.claim(ip, "ipgroup/g", again);
    assertThat(r.outcome()).isEqualTo(ClaimResult.Outcome.ALREADY_OURS);
    assertThat(r.claim().getSpec().owner().uid()).isEqualTo("uid-1"); // the record keeps the first uid
    assertThat(ledger.claim(ip, "ipgroup/g", other).outcome()).isEqualTo(ClaimResult.Outcome.HELD_BY_OTHER);
    assertThat(ledger.release(ip, other)).isFalse();
    assertThat(ledger.releaseClaim(ip, again)).hasValueSatisfying(c ->
        assertThat(c.getSpec().address()).isEqualTo("192.0.2.79"));
    assertThat(ledger.get(ip)).isEmpty();
  }

  /** Review M4: a claim whose address is not an address is refused by the API server. */
  @Test
  void aClaimMustCarryAnAddress(KubernetesClient client) {
    for (String bad : List.of("not-an-ip", "999.1.1.1", "1.2.3", "", "192.0.2.1/32")) {
      IPClaim c = IPClaim.of("bad-" + Math.abs(bad.hashCode()), new IPClaimSpec(bad, "egressipam/x", ns("a")),
          java.util.Map.of());
      assertThatThrownBy(() -> client.resource(c).create()).as(bad)
          .isInstanceOf(KubernetesClientException.class).hasMessageContaining("spec.address");
    }
    for (String good : List.of("192.0.2.80", "2001:db8::80", "::ffff:192.0.2.81")) {
      IPClaim c = IPClaim.of("good-" + Math.abs(good.hashCode()), new IPClaimSpec(good, "egressipam/x", ns("a")),
          java.util.Map.of());
      assertThat(client.resource(c).create().getSpec().address()).isEqualTo(good);
      client.resource(c).delete();
    }
  }
}
