package org.ipamoperators.keepalived.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.ipamoperators.controller.common.ids.ClusterIdLedger;
import org.ipamoperators.controller.common.ids.IDClaim;
import org.ipamoperators.keepalived.KeepalivedSettings;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * A deleted KeepalivedGroup's router ids and metrics port stay taken for the grace (its pods, until garbage-collected,
 * still run VRRP with those ids), in the ledger, so across an operator restart too; then they are released and the
 * next group of the segment may get them.
 */
@KubeApiTest(crds = {"META-INF/fabric8/idclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/keepalivedgroups.redhatcop.redhat.io-v1.yml"})
class GroupDeletionGraceIT {
  private static final Duration GRACE = Duration.ofSeconds(40);
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Test
  void aDeletedGroupsIdsAndPortStayTakenForTheGraceAcrossARestartThenGoToTheNextGroup(KubeApiServer server,
      KubernetesClient client) {
    KeepalivedSettings settings = new KeepalivedSettings("test/keepalived:1", "test/ipam:1", GRACE);
    KeepalivedCluster cluster = new KeepalivedCluster(client);
    Operator operator = KeepalivedCluster.startOperator(server, settings);
    try {
      cluster.node("a", "203.0.113.10");
      // A router-id space of this test's own: the ids it hands out are the lowest free ones, 1 first.
      KeepalivedCluster.SpecBuilder spec = KeepalivedCluster.spec(cluster.ns);
      spec.space = "grace-" + Integer.toHexString(cluster.ns.hashCode());
      KeepalivedGroupSpec segment = spec.build();
      cluster.group("first", segment);
      // VIPs of this test's own (a VIP another group's ConfigMap still renders is not handed over).
      cluster.externalIps("s1", "first", "198.51.100.10");
      cluster.externalIps("s2", "first", "198.51.100.11");
      await().atMost(WAIT).untilAsserted(() -> {
        assertThat(cluster.routerIds("first")).hasSize(2);
        assertThat(cluster.portClaimsOf("first")).hasSize(1);
      });
      Set<Integer> firstIds = new TreeSet<>(cluster.routerIds("first").values());
      assertThat(firstIds).containsExactly(1, 2);
      int firstPort = cluster.portClaimsOf("first").get(0).getSpec().id();

      client.resources(KeepalivedGroup.class).withName("first").delete();
      await().atMost(WAIT).until(() -> cluster.group("first") == null);
      // A group created right after, on the same segment: other ids, another port.
      cluster.group("second", segment);
      cluster.externalIps("t1", "second", "198.51.100.20");
      await().atMost(WAIT).untilAsserted(() -> {
        assertThat(cluster.routerIds("second")).containsKey(cluster.ns + "/t1");
        assertThat(cluster.portClaimsOf("second")).hasSize(1);
      });
      assertThat(cluster.routerIds("second").values()).doesNotContainAnyElementsOf(firstIds);
      assertThat(cluster.portClaimsOf("second").get(0).getSpec().id()).isNotEqualTo(firstPort);
      // Still claimed in the ledger, retired: by the first group, with the time.
      List<IDClaim> retired = cluster.allClaimsOf("first");
      assertThat(retired).hasSize(3).allSatisfy(c -> assertThat(ClusterIdLedger.retiredAt(c)).isPresent());
      Instant retiredAt = ClusterIdLedger.retiredAt(retired.get(0)).orElseThrow();

      // A restart within the grace: the ledger still says taken.
      operator.stop();
      operator = KeepalivedCluster.startOperator(server, settings);
      cluster.externalIps("t2", "second", "198.51.100.21");
      await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.routerIds("second"))
          .containsKey(cluster.ns + "/t2"));
      assertThat(cluster.routerIds("second").values()).doesNotContainAnyElementsOf(firstIds);
      assertThat(cluster.allClaimsOf("first")).hasSize(3);
      assertThat(Instant.now()).as("the steps above must end within the grace to prove anything")
          .isBefore(retiredAt.plus(GRACE));

      // After the grace: released (not before), and the next id of the segment is the first group's.
      await().atMost(GRACE.plus(WAIT)).pollInterval(Duration.ofMillis(500))
          .until(() -> cluster.allClaimsOf("first").isEmpty());
      assertThat(Instant.now()).isAfterOrEqualTo(retiredAt.plus(GRACE));
      System.out.printf("the deleted group's ids %s and port %d were released %s after their retirement (grace %s)%n",
          firstIds, firstPort, Duration.between(retiredAt, Instant.now()), GRACE);
      cluster.externalIps("t3", "second", "198.51.100.22");
      await().atMost(WAIT).untilAsserted(() -> assertThat(cluster.routerIds("second"))
          .containsEntry(cluster.ns + "/t3", 1));
    } finally {
      operator.stop();
      cluster.close();
      // No garbage collector on this apiserver: the groups' ConfigMaps would go on rendering their VIPs.
      client.configMaps().withLabel(org.ipamoperators.keepalived.api.KeepalivedAnnotations.GROUP_LABEL).delete();
    }
  }
}
