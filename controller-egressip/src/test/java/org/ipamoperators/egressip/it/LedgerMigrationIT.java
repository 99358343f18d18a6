package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.ipamoperators.egressip.it.EgressCluster.cidr;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * An upgrade from the IPClaim ledger to blocks: a cluster where an older version left one IPClaim
 * per egress address. The controller keeps every assignment (the old claims are honoured as they
 * are, not converted), new allocations go to IPBlock entries, no address is ever in both ledgers
 * or with two namespaces, a restart changes nothing, and releasing an old address deletes its
 * IPClaim without writing a block entry for it.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/egressipams.redhatcop.redhat.io-v1.yml"},
    thirdPartyCrds = {ThirdPartyCrd.HOST_SUBNET, ThirdPartyCrd.NET_NAMESPACE, ThirdPartyCrd.INFRASTRUCTURE})
class LedgerMigrationIT {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int OLD = 6;
  private static final int NEW = 6;
  private EgressCluster cluster;
  private KubernetesClient client;
  private Operator operator;

  @BeforeEach
  void setUp(KubernetesClient client, TestInfo info) {
    this.client = client;
    cluster = new EgressCluster(client, EgressCluster.prefix(info), true);
  }

  @AfterEach
  void tearDown() {
    if (operator != null) {
      operator.stop();
    }
    cluster.close();
  }

  /** The claim an older version made for a namespace's address, labelled as it labelled them. */
  private IPClaim oldClaim(String pool, String ns, Ip ip) {
    return client.resources(IPClaim.class).resource(IPClaim.of(ClaimNames.of(ip),
        new IPClaimSpec(ip.toString(), pool, new ClaimOwner("egressip", "Namespace", null, ns, null)),
        Map.of(ClusterLedger.LABEL_CONTROLLER, "egressip", ClusterLedger.LABEL_POOL, ClaimNames.labelValue(pool),
            "ipam.ipamoperators.org/origin", "allocated"))).create();
  }

  private Map<String, String> uidsOfClaims() {
    Map<String, String> out = new HashMap<>();
    client.resources(IPClaim.class).list().getItems()
        .forEach(c -> out.put(c.getSpec().address(), c.getMetadata().getUid()));
    return out;
  }

  private Set<String> blockAddresses() {
    Set<String> out = new HashSet<>();
    client.resources(IPBlock.class).list().getItems().forEach(b -> out.addAll(b.entries().keySet()));
    return out;
  }

  @Test
  void oldClaimsAreKeptNewAllocationsGoToBlocksAndNoAddressIsDoubled(KubeApiServer server) {
    String ipam = cluster.n("mig");
    String pool = "egressipam/" + ipam;
    cluster.node("w1", Map.of("egressGateway", "true"));
    cluster.node("w2", Map.of("egressGateway", "true"));
    cluster.ipam(ipam, "egressGateway", Map.of(), null, null, cidr("192.0.2.0/26", "true"));
    // What an older version left: a claim and the published annotation per namespace, spread over
    // the CIDR so that new allocations must go around them.
    Map<String, String> oldAssigned = new HashMap<>();
    for (int i = 0; i < OLD; i++) {
      Ip ip = Ip.parse("192.0.2." + (1 + 3 * i));
      String ns = "old" + i;
      cluster.namespace(ns, ipam, ip.toString());
      cluster.annotate(ns, EgressAnnotations.EGRESSIPS_PUBLISHED, ip.toString());
      oldClaim(pool, cluster.n(ns), ip);
      oldAssigned.put(ns, ip.toString());
    }
    Map<String, String> oldUids = uidsOfClaims();
    assertThat(oldUids).hasSize(OLD);
    for (int i = 0; i < NEW; i++) {
      cluster.namespace("new" + i, ipam, null);
    }

    operator = SdnEgressIT.startOperator(server);
    Map<String, String> assigned = new HashMap<>();
    await().atMost(WAIT).untilAsserted(() -> {
      for (int i = 0; i < NEW; i++) {
        assertThat(cluster.egressIps("new" + i)).as("new%d", i).isNotBlank();
        assertThat(cluster.netNamespaceIps("new" + i)).hasSize(1);
      }
    });
    for (int i = 0; i < OLD; i++) {
      assigned.put("old" + i, cluster.egressIps("old" + i));
    }
    for (int i = 0; i < NEW; i++) {
      assigned.put("new" + i, cluster.egressIps("new" + i));
    }
    // Every old assignment kept, by the very claim the older version made.
    oldAssigned.forEach((ns, ip) -> assertThat(assigned.get(ns)).as(ns).isEqualTo(ip));
    assertThat(uidsOfClaims()).isEqualTo(oldUids);
    // New allocations are block entries of their namespaces, never IPClaims; no address twice.
    List<String> newIps = new ArrayList<>();
    for (int i = 0; i < NEW; i++) {
      String ip = assigned.get("new" + i);
      newIps.add(ip);
      assertThat(oldUids).doesNotContainKey(ip);
      assertThat(Ledgers.holder(client, Ip.parse(ip)).map(ClaimOwner::name)).contains(cluster.n("new" + i));
    }
    assertThat(blockAddresses()).containsExactlyInAnyOrderElementsOf(newIps);
    assertThat(new HashSet<>(assigned.values())).hasSize(OLD + NEW);
    assertThat(Ledgers.ofPool(client, pool)).hasSize(OLD + NEW);

    // A restart rebuilds from the cluster and changes nothing.
    operator.stop();
    Map<String, String> blockVersions = new HashMap<>();
    client.resources(IPBlock.class).list().getItems()
        .forEach(b -> blockVersions.put(b.getMetadata().getName(), b.getMetadata().getResourceVersion()));
    operator = SdnEgressIT.startOperator(server);
    cluster.namespace("late", ipam, null); // a pass must run after the restart
    await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.egressIps("late")).isNotBlank());
    assigned.forEach((ns, ip) -> assertThat(cluster.egressIps(ns)).as(ns).isEqualTo(ip));
    assertThat(uidsOfClaims()).isEqualTo(oldUids);
    assertThat(blockAddresses()).hasSize(NEW + 1).containsAll(newIps).doesNotContainAnyElementsOf(oldUids.keySet());

    // Releasing an old address deletes its IPClaim; nothing of it goes to a block.
    cluster.annotate("old0", EgressAnnotations.EGRESSIPAM, null);
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(client.resources(IPClaim.class).withName(ClaimNames.of(Ip.parse(oldAssigned.get("old0")))).get())
          .isNull();
      assertThat(cluster.egressIps("old0")).isNull();
    });
    assertThat(blockAddresses()).doesNotContain(oldAssigned.get("old0"));
    assertThat(uidsOfClaims()).hasSize(OLD - 1);
  }
}
