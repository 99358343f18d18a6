package org.ipamoperators.controller.common.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
          // the API server's answer as callers keep it: no managedFields (the server wrote some)
          assertThat(r.claim().getMetadata().getManagedFields()).isNullOrEmpty();
          assertThat(clients.get(0).resources(IPClaim.class).withName(r.claim().getMetadata().getName()).get()
              .getMetadata().getManagedFields()).isNotEmpty();
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

  /**
   * Issue 26: an IPClaim without a spec (the CRD allows it) labelled with a pool. Reading the pool
   * threw on it, which stuck the finalizer of whatever was being deleted; now it is skipped, listed
   * for reporting, its address counts as held by someone else, and no release removes it.
   */
  @Test
  void aClaimWithoutSpecIsSkippedListedAndNeverFree(KubernetesClient client) {
    ClusterLedger ledger = new ClusterLedger(client);
    String pool = "egressipam/specless";
    Ip good = Ip.parse("10.26.3.1");
    Ip bad = Ip.parse("10.26.3.2");
    assertThat(ledger.claim(good, pool, ns("a")).outcome()).isEqualTo(ClaimResult.Outcome.CLAIMED);
    IPClaim specless = new IPClaim();
    specless.setMetadata(new ObjectMetaBuilder().withName(ClaimNames.of(bad))
        .withLabels(Map.of(ClusterLedger.LABEL_POOL, ClaimNames.labelValue(pool))).build());
    client.resource(specless).create();

    assertThat(ledger.claimsOfPool(pool)).extracting(c -> c.getSpec().address()).containsExactly("10.26.3.1");
    assertThat(ledger.malformedClaimsOfPool(pool)).extracting(c -> c.getMetadata().getName()).containsExactly("10.26.3.2");
    assertThat(Malformed.problem(ledger.malformedClaimsOfPool(pool).get(0))).isEqualTo("has no spec");
    ClaimResult r = ledger.claim(bad, pool, ns("a"));
    assertThat(r.outcome()).isEqualTo(ClaimResult.Outcome.HELD_BY_OTHER);
    assertThat(r.holder().controller()).isEqualTo(Malformed.CONTROLLER);
    assertThat(ledger.release(bad, ns("a"))).isFalse();
    assertThat(ledger.get(bad)).isPresent();
  }

  /**
   * Issue 26: every delete carries the uid and resourceVersion read. A delete of a claim as it was
   * read before it was released and claimed again by another owner, one with the new claim's
   * resourceVersion but the old uid, and one with an old resourceVersion all leave the claim.
   */
  @Test
  void aStaleDeleteLeavesTheNewClaim(KubernetesClient client) {
    ClusterLedger ledger = new ClusterLedger(client);
    Ip ip = Ip.parse("10.26.3.10");
    IPClaim first = ledger.claim(ip, "egressipam/x", ns("a")).claim();
    assertThat(ledger.releaseIfUnchanged(first)).isTrue();
    IPClaim second = ledger.claim(ip, "egressipam/x", ns("b")).claim();

    assertThat(ledger.releaseIfUnchanged(first)).as("the first claim, as read before its release").isFalse();
    assertThat(ledger.get(ip)).hasValueSatisfying(c -> assertThat(c.getSpec().owner().name()).isEqualTo("b"));
    IPClaim oldUid = new IPClaim();
    oldUid.setMetadata(new ObjectMetaBuilder(second.getMetadata()).withUid(first.getMetadata().getUid()).build());
    assertThat(ledger.releaseIfUnchanged(oldUid)).as("the current resourceVersion with the old uid").isFalse();
    assertThat(ledger.get(ip)).hasValueSatisfying(c -> assertThat(c.getMetadata().getUid())
        .isEqualTo(second.getMetadata().getUid()));
    ledger.label(ip, "example.org/touched", "yes");
    assertThat(ledger.releaseIfUnchanged(second)).as("an older resourceVersion of the same claim").isFalse();
    assertThat(ledger.get(ip)).isPresent();

    assertThat(ledger.releaseIfUnchanged(ledger.get(ip).orElseThrow())).isTrue();
    assertThat(ledger.get(ip)).isEmpty();
  }
}
