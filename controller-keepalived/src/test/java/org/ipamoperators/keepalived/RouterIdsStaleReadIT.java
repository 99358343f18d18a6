package org.ipamoperators.keepalived;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.ipamoperators.controller.common.ids.ClusterIdLedger;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.controller.common.ids.IDClaimSpec;
import org.ipamoperators.controller.common.ids.IdSpace;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.testsupport.kube.ApiFaultProxy;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * Two KeepalivedGroups on one network get 30 new Services each at once (issue 14: the keepalived Lease-deletion run
 * under API faults took 160-210 s to converge). Each group reads the shared router-id space, then claims; the
 * second's read misses the ids the first claimed meanwhile. Every id it then finds taken must be passed over for
 * good, not tried again for every one of its keys: counted here as requests through a (fault-free) proxy.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml"})
class RouterIdsStaleReadIT {
  private static final int KEYS = 30;
  private final IdSpace space = RouterIds.space("stale-read");

  @Test
  void idsTakenSinceTheReadAreTriedOnceNotOncePerKey(KubeApiServer server, KubernetesClient client)
      throws Exception {
    ClaimOwner a = RouterIds.owner("ns", "a", "uid-a");
    ClaimOwner b = RouterIds.owner("ns", "b", "uid-b");
    // Group a's claims on ids 1..30, made after b's read: without the space label, b's list does not show them (as
    // a read a moment too early would not), while their names still block b's creates.
    for (int id = 1; id <= KEYS; id++) {
      client.resource(IDClaim.of(space.claimName(id), new IDClaimSpec(space.name(), id, "a-vip-" + id, a),
          Map.of(ClusterLedger.LABEL_CONTROLLER, RouterIds.CONTROLLER))).create();
    }
    SortedSet<String> wanted = new TreeSet<>();
    for (int i = 0; i < KEYS; i++) {
      wanted.add(String.format("b-vip-%02d", i));
    }
    try (ApiFaultProxy proxy = new ApiFaultProxy(server, 1L);
        KubernetesClient viaProxy = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(proxy.kubeconfig()))
            .build()) {
      proxy.inject(false);
      RouterIds routerIds = new RouterIds(new ClusterIdLedger(viaProxy), Duration.ofSeconds(90), Clock.systemUTC());
      long before = proxy.forwarded();
      RouterIds.Result r = routerIds.sync(b, space, wanted, Set.of(), Map.of());
      long requests = proxy.forwarded() - before;
      System.out.printf("[router-ids] %d keys, %d ids taken since the read: %d requests%n", KEYS, KEYS, requests);

      // No id of a's is given to b, every key has one, and they are the lowest free ones.
      assertThat(r.exhausted()).isEmpty();
      assertThat(r.ids()).hasSize(KEYS);
      assertThat(new HashSet<>(r.ids().values())).hasSize(KEYS).allMatch(id -> id > KEYS && id <= 2 * KEYS);
      Map<Integer, String> holders = new TreeMap<>();
      for (IDClaim c : client.resources(IDClaim.class).list().getItems()) {
        assertThat(holders.put(c.getSpec().id(), c.getSpec().owner().name())).as("id %d", c.getSpec().id()).isNull();
      }
      assertThat(holders).hasSize(2 * KEYS);
      // Two lists, one failed create and one read per id of a's, one create per key: 92. Trying a's 30 ids again
      // for every key would be about 1,800.
      assertThat(requests).as("requests for %d keys against %d ids taken since the read", KEYS, KEYS)
          .isLessThanOrEqualTo(2 + 2L * KEYS + KEYS + 10);
    }
  }
}
