package org.ipamoperators.egressip.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.ipamoperators.egressip.network.NetworkWrite;
import org.ipamoperators.egressip.network.OvnWriter;
import org.ipamoperators.testsupport.crds.ThirdPartyCrd;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * An EgressIPAM's writer deletes only the EgressIP it decided on: {@code egressipam-<ns>} is named after the
 * namespace alone, so when the object the decision saw was deleted and created again by another EgressIPAM
 * (or changed since), a delete from the stale view must leave the new object to its owner.
 */
@KubeApiTest(thirdPartyCrds = ThirdPartyCrd.EGRESS_IP)
class OvnStaleDeleteIT {
  private static final ResourceDefinitionContext EGRESS_IP = new ResourceDefinitionContext.Builder()
      .withGroup("k8s.ovn.org").withVersion("v1").withKind("EgressIP").withPlural("egressips").withNamespaced(false).build();

  private static GenericKubernetesResource egressIp(String ipam, String ns, String ip) {
    return new GenericKubernetesResourceBuilder()
        .withApiVersion("k8s.ovn.org/v1").withKind("EgressIP").withNewMetadata().withName(OvnWriter.objectName(ns))
        .addToLabels(EgressAnnotations.MANAGED_BY, ipam).endMetadata()
        .addToAdditionalProperties("spec", Map.of("egressIPs", List.of(ip),
            "namespaceSelector", Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", ns))))
        .build();
  }

  /** A writer whose view of IPAM {@code ipam}'s EgressIPs is the one given, whatever happens later. */
  private static OvnWriter stale(KubernetesClient client, List<GenericKubernetesResource> view, List<String> deleted) {
    return new OvnWriter(client, new OvnWriter.View() {
      @Override
      public Collection<GenericKubernetesResource> mine(String ipam) {
        return view;
      }

      @Override
      public void deleted(String name, String resourceVersion) {
        deleted.add(name);
      }
    }, Runnable::run);
  }

  /** IPAM {@code ipam} serving no namespace any more: its writer deletes every EgressIP of its view. */
  private static NetworkWrite servingNothing(String ipam) {
    return new NetworkWrite(ipam, List.of(IpRange.parse("192.0.2.0/24")), Map.of(), Set.of(), Map.of(), Map.of(),
        Set.of());
  }

  @Test
  void aStaleDeleteLeavesTheObjectAnotherIpamCreatedUnderTheSameName(KubernetesClient client, Namespace test) {
    String ns = test.getMetadata().getName();
    var egressIps = client.genericKubernetesResources(EGRESS_IP);
    String name = OvnWriter.objectName(ns);
    // IPAM a served the namespace; its writer's view (an informer lagging behind) still shows a's object.
    GenericKubernetesResource seen = egressIps.resource(egressIp("a", ns, "192.0.2.10")).create();
    List<GenericKubernetesResource> view = List.of(OvnWriter.trimmed(seen));
    // Meanwhile a's object went and IPAM b created its own for the namespace, under the same name.
    egressIps.withName(name).delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> egressIps.withName(name).get() == null);
    GenericKubernetesResource theirs = egressIps.resource(egressIp("b", ns, "198.51.100.10")).create();
    assertThat(theirs.getMetadata().getUid()).isNotEqualTo(seen.getMetadata().getUid());

    List<String> deleted = Collections.synchronizedList(new ArrayList<>());
    List<String> failures = stale(client, view, deleted).apply(servingNothing("a"), List.of());

    GenericKubernetesResource after = egressIps.withName(name).get();
    assertThat(after).as("b's EgressIP, deleted by a's stale view").isNotNull();
    assertThat(after.getMetadata().getUid()).isEqualTo(theirs.getMetadata().getUid());
    assertThat(OvnWriter.ipamOf(after)).isEqualTo("b");
    assertThat(failures).singleElement().asString().startsWith("EgressIP " + name + ": not deleted").contains("409");
    assertThat(deleted).as("the view is not told of a delete that did not happen").isEmpty();

    // The next pass, from a fresh view (a's objects only): nothing of a's left, b's untouched.
    assertThat(new OvnWriter(client).apply(servingNothing("a"), List.of())).isEmpty();
    assertThat(egressIps.withName(name).get().getMetadata().getUid()).isEqualTo(theirs.getMetadata().getUid());
  }

  @Test
  void aStaleDeleteLeavesAnObjectChangedSinceAndAFreshOneDeletesIt(KubernetesClient client, Namespace test) {
    String ns = test.getMetadata().getName();
    var egressIps = client.genericKubernetesResources(EGRESS_IP);
    String name = OvnWriter.objectName(ns);
    GenericKubernetesResource seen = egressIps.resource(egressIp("a", ns, "192.0.2.11")).create();
    List<GenericKubernetesResource> view = List.of(OvnWriter.trimmed(seen));
    // Changed after the view was taken (handed to IPAM b by relabelling it): same uid, another version.
    GenericKubernetesResource changed = egressIps.withName(name).edit(x -> {
      x.getMetadata().getLabels().put(EgressAnnotations.MANAGED_BY, "b");
      return x;
    });
    assertThat(changed.getMetadata().getResourceVersion()).isNotEqualTo(seen.getMetadata().getResourceVersion());

    List<String> deleted = Collections.synchronizedList(new ArrayList<>());
    List<String> failures = stale(client, view, deleted).apply(servingNothing("a"), List.of());
    assertThat(egressIps.withName(name).get()).as("deleted although it changed since the decision").isNotNull();
    assertThat(failures).singleElement().asString().contains("409");
    assertThat(deleted).isEmpty();

    // Gone already: reported (404), never thrown.
    egressIps.withName(name).delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> egressIps.withName(name).get() == null);
    assertThat(stale(client, view, deleted).apply(servingNothing("a"), List.of()))
        .singleElement().asString().contains("404");

    // A view that is current deletes: the precondition is no obstacle to a decision made on the object itself.
    GenericKubernetesResource ours = egressIps.resource(egressIp("a", ns, "192.0.2.12")).create();
    assertThat(stale(client, List.of(OvnWriter.trimmed(ours)), deleted).apply(servingNothing("a"), List.of())).isEmpty();
    assertThat(egressIps.withName(name).get()).isNull();
    assertThat(deleted).containsExactly(name);
  }
}
