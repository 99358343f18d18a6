package org.ipamoperators.eip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.ipamoperators.testsupport.kube.ApiFaultProxy;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.ec2.model.Address;

/**
 * An operator whose watches hear nothing (a replica cut off from events, not from the API) still holds an Eip its
 * first list saw, after that Eip was deleted (its address released, as another replica's cleanup would) and made
 * again under its name with a new UID. Reconciling the stale copy must not allocate an address for the old UID nor
 * write one into the new Eip's status: the new Eip would show an address that changes once it is served, and the
 * old UID's address would leak until the orphan sweep.
 */
class StaleCacheIT extends EipIT {

  @Test
  void aStaleCopyOfADeletedAndRecreatedEipAllocatesNothingAndWritesNoStatus() throws Exception {
    world.eip("x", EipSelector.pod("no-such-pod"));
    try (ApiFaultProxy proxy = new ApiFaultProxy(server, 1L)) {
      proxy.silenceWatches(true);
      KubernetesClient stale = new KubernetesClientBuilder()
          .withConfig(io.fabric8.kubernetes.client.Config.fromKubeconfig(proxy.kubeconfig())).build();
      world.start(stale, moto, world.settings(Map.of("NAMESPACE", world.ns)));
      await().atMost(WAIT).until(() -> world.eip("x").getStatus() != null
          && world.eip("x").getStatus().allocationId() != null);
      String oldUid = world.eip("x").getMetadata().getUid();
      String first = world.eip("x").getStatus().allocationId();

      // Deleted, unseen by the operator: its address released and its finalizer removed as another replica's
      // cleanup would; then made again under the same name.
      world.kube.resources(Eip.class).withName("x").delete();
      world.ec2.releaseAddress(r -> r.allocationId(first));
      world.kube.resources(Eip.class).withName("x").edit(e -> {
        e.getMetadata().setFinalizers(List.of());
        return e;
      });
      await().atMost(WAIT).until(() -> world.eip("x") == null);
      String newUid = world.eip("x", EipSelector.pod("no-such-pod")).getMetadata().getUid();

      // Three resyncs of the stale copy.
      Instant until = Instant.now().plus(EipWorld.RESYNC.multipliedBy(3));
      while (Instant.now().isBefore(until)) {
        Eip now = world.eip("x");
        assertThat(now.getStatus() == null ? null : now.getStatus().allocationId())
            .as("the new Eip's status, written by a stale reconcile of the old one").isNull();
        Thread.sleep(200);
      }
      assertThat(world.addresses()).as("addresses of the old UID " + oldUid)
          .noneMatch(a -> oldUid.equals(EipWorld.tags(a).get(EipNames.TAG_UID)));
      assertThat(world.count("AllocateAddress")).isEqualTo(1);

      // Its watches back, the operator serves the new Eip with one address.
      proxy.silenceWatches(false);
      await().atMost(WAIT).until(() -> world.eip("x").getStatus() != null
          && world.eip("x").getStatus().allocationId() != null);
      List<Address> ours = world.addresses().stream()
          .filter(a -> world.ns.equals(EipWorld.tags(a).get(EipNames.TAG_NAMESPACE))).toList();
      assertThat(ours).extracting(Address::allocationId).containsExactly(world.eip("x").getStatus().allocationId());
      assertThat(EipWorld.tags(ours.get(0))).containsEntry(EipNames.TAG_UID, newUid);
    }
  }
}
