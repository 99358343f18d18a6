package org.ipamoperators.eip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.eip.api.EipSpec;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.ec2.model.Address;

/**
 * Scenario 24, uninstall safety, as controller-eip/README.md documents it. The operator never puts a finalizer on
 * pods or nodes, so removing it never leaves a workload stuck; its only finalizer is the Eip's. Two ways out:
 * delete the Eips while the operator still runs (addresses released, or with {@code reclaimPolicy: Retain} kept
 * and untagged, claims released, finalizers gone), or remove the operator first and strip the Eips' finalizers
 * (addresses untouched; a later install takes them back by their UID tag).
 */
class UninstallIT extends EipIT {
  private static final String MERGE_NO_FINALIZERS = "{\"metadata\":{\"finalizers\":null}}";

  private record Setup(String[] db0, String[] db1, String[] web) {}

  /** A node, three pods: db-0 (Eip "db", Delete), db-1 (Eip "keep", Retain), web (autocreate); all associated. */
  private Setup running() {
    EipWorld.Host host = world.instance();
    Setup s = new Setup(world.podEni(host, 1), world.podEni(host, 2), world.podEni(host, 3));
    world.node("n1", host, Map.of(), true);
    world.pod("db-0", "n1", s.db0()[1], EipWorld.managed(), Map.of());
    world.pod("db-1", "n1", s.db1()[1], EipWorld.managed(), Map.of());
    world.pod("web", "n1", s.web()[1], Map.of(EipNames.MANAGE_LABEL, "true", EipNames.AUTOCREATE_LABEL, "true"),
        Map.of());
    world.eip("db", EipSelector.pod("db-0"));
    world.eip("keep", new EipSpec(null, EipSelector.pod("db-1"), EipSpec.ReclaimPolicy.Retain, null));
    world.start(server, moto);
    await().atMost(WAIT).untilAsserted(() -> {
      for (String e : List.of("db", "keep", "web")) {
        assertThat(world.condition(e, "Ready").getStatus()).as("Eip %s ready", e).isEqualTo("True");
      }
      assertThat(world.addresses()).hasSize(3).allSatisfy(a -> assertThat(a.associationId()).isNotNull());
    });
    return s;
  }

  private void noFinalizerOnPodsOrNodes() {
    List<HasMetadata> objects = new java.util.ArrayList<>(world.kube.pods().list().getItems());
    world.nodes.forEach(n -> objects.add(world.kube.nodes().withName(n).get()));
    assertThat(objects).allSatisfy(o -> assertThat(o.getMetadata().getFinalizers())
        .as("finalizers of %s %s", o.getKind(), o.getMetadata().getName()).isNullOrEmpty());
  }

  /** Deleting pods (no grace: there is no kubelet) and nodes completes: nothing of ours holds them. */
  private void workloadsGoAway() {
    for (String p : List.of("db-0", "db-1", "web")) {
      world.kube.pods().withName(p).withGracePeriod(0).delete();
    }
    world.nodes.forEach(n -> world.kube.nodes().withName(n).delete());
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.kube.pods().list().getItems()).isEmpty();
      world.nodes.forEach(n -> assertThat(world.kube.nodes().withName(n).get()).isNull());
    });
  }

  @Test
  void eipsDeletedBeforeTheOperatorGoesReleaseOrRetainTheirAddressesAndNothingIsLeftHolding() {
    Setup s = running();
    noFinalizerOnPodsOrNodes();
    String kept = world.eip("keep").getStatus().allocationId();
    List<String> publicIps = world.addresses().stream().map(Address::publicIp).toList();
    ClusterLedger ledger = new ClusterLedger(world.kube);
    assertThat(publicIps).allSatisfy(ip -> assertThat(ledger.get(Ip.parse(ip))).isPresent());

    // 1. No Eip is autocreated again: the workloads drop the label (or are scaled down).
    world.kube.pods().withName("web").edit(p -> {
      p.getMetadata().getLabels().remove(EipNames.AUTOCREATE_LABEL);
      return p;
    });
    // 2. kubectl delete eips --all, the operator still running.
    world.kube.resources(Eip.class).delete();
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(world.kube.resources(Eip.class).list().getItems()).isEmpty();
      assertThat(world.addresses()).singleElement().satisfies(a -> {
        assertThat(a.allocationId()).as("the Retain Eip's address is kept").isEqualTo(kept);
        assertThat(a.associationId()).as("and disassociated").isNull();
        assertThat(a.tags()).noneMatch(t -> t.key().startsWith("eip.materialize.cloud/"));
      });
    });
    assertThat(world.count("ReleaseAddress")).isEqualTo(2);
    assertThat(publicIps).allSatisfy(ip -> assertThat(ledger.get(Ip.parse(ip))).as("claim of %s", ip).isEmpty());
    assertThat(world.pod("db-0").getMetadata().getAnnotations()).doesNotContainKey(EipNames.ALLOCATION_ID_ANNOTATION);
    assertThat(s.db0()).isNotNull();

    // 3. The operator goes; pods and nodes are deleted as if it had never been there.
    world.stopOperators();
    noFinalizerOnPodsOrNodes();
    workloadsGoAway();
  }

  @Test
  void theOperatorRemovedFirstLeavesAddressesInPlaceAndAReinstallTakesThemBackWithoutACall() {
    running();
    Map<String, String> before = new java.util.TreeMap<>();
    world.addresses().forEach(a -> before.put(a.allocationId(), a.associationId()));

    // 1. The operator goes (helm uninstall); 2. the documented patch on every Eip.
    world.stopOperators();
    int calls = world.calls.size();
    for (Eip e : world.kube.resources(Eip.class).list().getItems()) {
      world.kube.resources(Eip.class).withName(e.getMetadata().getName())
          .patch(PatchContext.of(PatchType.JSON_MERGE), MERGE_NO_FINALIZERS);
    }
    assertThat(world.kube.resources(Eip.class).list().getItems()).hasSize(3)
        .allSatisfy(e -> assertThat(e.getMetadata().getFinalizers()).isNullOrEmpty());
    noFinalizerOnPodsOrNodes();
    // Nothing touched AWS: every address still where it was.
    Map<String, String> after = new java.util.TreeMap<>();
    world.addresses().forEach(a -> after.put(a.allocationId(), a.associationId()));
    assertThat(after).isEqualTo(before);
    assertThat(world.calls).hasSize(calls);

    // A later install finds every address by its Eip's UID tag: nothing allocated, associated or released.
    world.start(server, moto);
    await().atMost(WAIT).untilAsserted(() -> {
      for (String e : List.of("db", "keep", "web")) {
        assertThat(world.condition(e, "Ready").getStatus()).as("Eip %s ready", e).isEqualTo("True");
        assertThat(world.eip(e).getMetadata().getFinalizers()).contains(EipNames.EIP_FINALIZER);
      }
    });
    Map<String, String> reinstalled = new java.util.TreeMap<>();
    world.addresses().forEach(a -> reinstalled.put(a.allocationId(), a.associationId()));
    assertThat(reinstalled).isEqualTo(before);
    assertThat(world.count("AllocateAddress")).isEqualTo(3); // the first install's only
    assertThat(world.count("AssociateAddress")).isEqualTo(3);
    assertThat(world.count("ReleaseAddress")).isZero();

    world.stopOperators();
    workloadsGoAway();
  }
}
