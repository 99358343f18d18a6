package org.ipamoperators.controller.common.ids;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.Malformed;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/** The id ledger on a real API server: creating the claim is the lock, even between separate clients. */
@KubeApiTest(crds = "META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml")
class ClusterIdLedgerIT {
  private static final IdSpace VRRP = IdSpace.vrrpRouterIds("lan");

  private static ClaimOwner group(String name) {
    return new ClaimOwner("keepalived", "KeepalivedGroup", "kg", name, "uid-" + name);
  }

  @Test
  void twoReplicasRacingForManyPurposesNeverShareAnId(KubeApiServer server) throws Exception {
    List<KubernetesClient> clients = List.of(server.newClient(), server.newClient());
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      // Two replicas (separate clients), each with four groups claiming 30 ids at once: 240 claims for 255 ids.
      List<Future<Map.Entry<String, IdClaimResult>>> results = new ArrayList<>();
      for (int g = 0; g < 8; g++) {
        ClusterIdLedger ledger = new ClusterIdLedger(clients.get(g % 2));
        ClaimOwner owner = group("g" + g);
        for (int k = 0; k < 30; k++) {
          String purpose = "ns/svc-" + k;
          results.add(pool.submit((Callable<Map.Entry<String, IdClaimResult>>) () ->
              Map.entry(owner.name() + " " + purpose, ledger.claimFirstFree(VRRP, purpose, owner, Set.of()))));
        }
      }
      Map<Integer, String> byId = new HashMap<>();
      for (Future<Map.Entry<String, IdClaimResult>> f : results) {
        IdClaimResult r = f.get().getValue();
        assertThat(r.outcome()).isEqualTo(IdClaimResult.Outcome.CLAIMED);
        String previous = byId.put(r.id().getAsInt(), f.get().getKey());
        assertThat(previous).as("id %d given twice", r.id().getAsInt()).isNull();
      }
      assertThat(byId).hasSize(240);
      // What the API server holds agrees: 240 claims, each number once, each owner's purpose once.
      List<IDClaim> stored = new ClusterIdLedger(clients.get(0)).claimsOf(VRRP);
      assertThat(stored).hasSize(240);
      assertThat(stored.stream().map(c -> c.getSpec().owner().name() + " " + c.getSpec().purpose()).distinct())
          .hasSize(240);
      assertThat(stored).allSatisfy(c -> assertThat(c.getMetadata().getName())
          .isEqualTo("vrrp-lan." + c.getSpec().id()));
    } finally {
      pool.shutdownNow();
      clients.forEach(KubernetesClient::close);
    }
  }

  @Test
  void exactlyOneOfManyClaimantsOfOneNumberWins(KubeApiServer server) throws Exception {
    List<KubernetesClient> clients = List.of(server.newClient(), server.newClient(), server.newClient());
    ExecutorService pool = Executors.newFixedThreadPool(12);
    try {
      List<Future<IdClaimResult>> results = new ArrayList<>();
      for (int i = 0; i < 24; i++) {
        ClusterIdLedger ledger = new ClusterIdLedger(clients.get(i % clients.size()));
        ClaimOwner owner = group("g" + i);
        results.add(pool.submit(() -> ledger.claim(VRRP, 7, "ns/web", owner)));
      }
      Set<String> winners = new HashSet<>();
      Set<String> reportedHolders = new HashSet<>();
      for (Future<IdClaimResult> f : results) {
        IdClaimResult r = f.get();
        if (r.outcome() == IdClaimResult.Outcome.CLAIMED) {
          winners.add(r.holder().name());
        } else {
          assertThat(r.outcome()).isEqualTo(IdClaimResult.Outcome.HELD_BY_OTHER);
          reportedHolders.add(r.holder().name());
        }
      }
      assertThat(winners).hasSize(1);
      assertThat(reportedHolders).isEqualTo(winners);
    } finally {
      pool.shutdownNow();
      clients.forEach(KubernetesClient::close);
    }
  }

  @Test
  void theBlacklistIsSkippedAndExhaustionIsReported(KubernetesClient client) {
    ClusterIdLedger ledger = new ClusterIdLedger(client);
    IdSpace small = new IdSpace("small", 1, 5);
    Set<Integer> blacklist = Set.of(1, 2, 4);
    assertThat(ledger.claimFirstFree(small, "a", group("x"), blacklist).id()).hasValue(3);
    assertThat(ledger.claimFirstFree(small, "b", group("y"), blacklist).id()).hasValue(5);
    IdClaimResult none = ledger.claimFirstFree(small, "c", group("x"), blacklist);
    assertThat(none.outcome()).isEqualTo(IdClaimResult.Outcome.EXHAUSTED);
    assertThat(none.id()).isEmpty();
    assertThat(ledger.claimsOf(small)).extracting(c -> c.getSpec().id()).containsExactly(3, 5);
    // Spaces are independent: the same number in another space is another claim.
    assertThat(ledger.claim(new IdSpace("other", 1, 5), 3, "a", group("y")).outcome())
        .isEqualTo(IdClaimResult.Outcome.CLAIMED);
  }

  @Test
  void claimingAgainIsIdempotentPerPurposeAndOnlyTheOwnerReleases(KubernetesClient client) {
    ClusterIdLedger ledger = new ClusterIdLedger(client);
    assertThat(ledger.claim(VRRP, 9, "ns/a", group("x")).outcome()).isEqualTo(IdClaimResult.Outcome.CLAIMED);
    assertThat(ledger.claim(VRRP, 9, "ns/a", group("x")).outcome()).isEqualTo(IdClaimResult.Outcome.ALREADY_OURS);
    // One number, one purpose: the same owner cannot use it for a second instance.
    assertThat(ledger.claim(VRRP, 9, "ns/b", group("x")).outcome()).isEqualTo(IdClaimResult.Outcome.HELD_BY_OTHER);
    assertThat(ledger.claimsOf(group("x"))).extracting(c -> c.getSpec().id()).containsExactly(9);
    assertThat(ledger.release(VRRP, 9, group("y"))).isFalse();
    assertThat(ledger.get(VRRP, 9)).isPresent();
    assertThat(ledger.release(VRRP, 9, group("x"))).isTrue();
    assertThat(ledger.get(VRRP, 9)).isEmpty();
    assertThat(ledger.release(VRRP, 9, group("x"))).isFalse();
    assertThat(ledger.claim(VRRP, 9, "ns/a", group("y")).outcome()).isEqualTo(IdClaimResult.Outcome.CLAIMED);
  }

  @Test
  void aStaleReleaseNeverRemovesAClaimReCreatedMeanwhile(KubernetesClient client) {
    ClusterIdLedger ledger = new ClusterIdLedger(client);
    ledger.claim(VRRP, 11, "ns/a", group("x"));
    IDClaim seen = ledger.get(VRRP, 11).orElseThrow();
    client.resource(seen).delete();
    ledger.claim(VRRP, 11, "ns/a", group("x"));
    // A delete guarded by the resourceVersion read before is refused by the API server.
    assertThatThrownBy(() -> client.resources(IDClaim.class).withName("vrrp-lan.11")
        .lockResourceVersion(seen.getMetadata().getResourceVersion()).delete())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(409));
    assertThat(ledger.get(VRRP, 11)).isPresent();
  }

  @Test
  void aClaimCannotBeRewritten(KubernetesClient client) {
    ClusterIdLedger ledger = new ClusterIdLedger(client);
    ledger.claim(VRRP, 12, "ns/a", group("x"));
    IDClaim c = ledger.get(VRRP, 12).orElseThrow();
    c.setSpec(new IDClaimSpec(VRRP.name(), 12, "ns/a", group("thief")));
    assertThatThrownBy(() -> client.resource(c).update())
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("an IDClaim cannot be changed");
  }

  @Test
  void idSpacesCheckTheirNumbers() {
    assertThat(IntStream.rangeClosed(1, 255).allMatch(VRRP::contains)).isTrue();
    assertThatThrownBy(() -> VRRP.claimName(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> VRRP.claimName(256)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new IdSpace("Bad_Name", 1, 2)).isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * Issue 26: an IDClaim without a spec is skipped by the readers and listed for reporting; its number stays
   * taken (the first free number passes over it), and no release removes it.
   */
  @Test
  void aClaimWithoutSpecIsSkippedListedAndItsNumberStaysTaken(KubernetesClient client) {
    ClusterIdLedger ledger = new ClusterIdLedger(client);
    IdSpace space = new IdSpace("specless", 1, 5);
    IDClaim specless = new IDClaim();
    specless.setMetadata(new ObjectMetaBuilder().withName(space.claimName(1))
        .withLabels(Map.of(ClusterIdLedger.LABEL_SPACE, space.name())).build());
    client.resource(specless).create();

    assertThat(ledger.claimsOf(space)).isEmpty();
    assertThat(ledger.malformedClaimsOf(space)).extracting(c -> c.getMetadata().getName())
        .containsExactly(space.claimName(1));
    IdClaimResult one = ledger.claim(space, 1, "p", group("x"));
    assertThat(one.outcome()).isEqualTo(IdClaimResult.Outcome.HELD_BY_OTHER);
    assertThat(one.holder().controller()).isEqualTo(Malformed.CONTROLLER);
    IdClaimResult first = ledger.claimFirstFree(space, "p", group("x"), Set.of());
    assertThat(first.id()).hasValue(2);
    assertThat(ledger.release(space, 1, group("x"))).isFalse();
    assertThat(ledger.get(space, 1)).isPresent();
  }

  /** Issue 26: a release of a claim as it was read carries its uid: a claim re-created meanwhile by another stays. */
  @Test
  void aReleaseOfAClaimAsReadLeavesOneReCreatedByAnother(KubernetesClient client) {
    ClusterIdLedger ledger = new ClusterIdLedger(client);
    IdSpace space = new IdSpace("stale", 1, 5);
    ledger.claim(space, 3, "p", group("x"));
    IDClaim seen = ledger.get(space, 3).orElseThrow();
    assertThat(ledger.release(space, 3, group("x"))).isTrue();
    ledger.claim(space, 3, "p", group("y"));
    IDClaim now = ledger.get(space, 3).orElseThrow();

    assertThat(ledger.releaseIfUnchanged(seen)).isFalse();
    IDClaim oldUid = new IDClaim();
    oldUid.setMetadata(new ObjectMetaBuilder(now.getMetadata()).withUid(seen.getMetadata().getUid()).build());
    assertThat(ledger.releaseIfUnchanged(oldUid)).isFalse();
    assertThat(ledger.get(space, 3)).hasValueSatisfying(c -> assertThat(c.getSpec().owner().name()).isEqualTo("y"));
    assertThat(ledger.releaseIfUnchanged(now)).isTrue();
    assertThat(ledger.get(space, 3)).isEmpty();
  }
}
