package org.ipamoperators.vip;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.ipamoperators.controller.common.ledger.ClaimIndex;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * The sweep against a real API server with an informer cache that shows no Service at all (as a
 * fresh leader's may not show a Service another replica served a moment ago): a claim is released
 * only when the API server confirms its Service is gone, or is another Service of the same name by
 * now (another uid). The claim of a Service that exists but is not cached is kept.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml"})
class OrphanSweepIT {
  @Test
  void aClaimIsReleasedOnlyWhenTheApiServerConfirmsItsServiceIsGone(KubernetesClient client) {
    String ns = client.getNamespace();
    String uid = client.services().resource(new ServiceBuilder().withNewMetadata().withName("present").endMetadata()
        .withNewSpec().withType("ClusterIP").addNewPort().withPort(80).endPort().endSpec().build()).create()
        .getMetadata().getUid();
    ClaimIndex index = new ClaimIndex();
    index.seen(claim(client, "192.0.2.1", new ClaimOwner("vip", "Service", ns, "present", uid)));
    index.seen(claim(client, "192.0.2.2", new ClaimOwner("vip", "Service", ns, "absent", "uid-of-a-deleted-one")));
    index.seen(claim(client, "192.0.2.3", new ClaimOwner("vip", "Service", ns, "present", "uid-of-an-earlier-one")));
    index.seen(claim(client, "192.0.2.4", new ClaimOwner("egress", "Namespace", null, "absent", "x")));
    List<String> released = new ArrayList<>();
    OrphanSweep sweep = new OrphanSweep(client, index, Set.of(), (ip, owner) -> {
      released.add(ip.toString());
      client.resources(IPClaim.class).withName(ClaimNames.of(ip)).delete();
      return true;
    }, (ip, member) -> false, () -> {}, VipSettings.defaults());
    sweep.servicesCache(emptyCache());
    try {
      assertThat(sweep.sweep()).isEqualTo(2);
      assertThat(released).containsExactlyInAnyOrder("192.0.2.2", "192.0.2.3");
      assertThat(client.resources(IPClaim.class).withName(ClaimNames.of(Ip.parse("192.0.2.1"))).get())
          .as("the claim of a Service that exists but is not cached").isNotNull();
    } finally {
      client.resources(IPClaim.class).delete();
      client.services().withName("present").delete();
    }
  }

  private static IPClaim claim(KubernetesClient client, String ip, ClaimOwner owner) {
    return client.resource(IPClaim.of(ClaimNames.of(Ip.parse(ip)), new IPClaimSpec(ip, "ipgroup/p", owner), Map.of()))
        .create();
  }

  private static IndexerResourceCache<io.fabric8.kubernetes.api.model.Service> emptyCache() {
    return new IndexerResourceCache<>() {
      @Override
      public void addIndexers(Map<String, Function<io.fabric8.kubernetes.api.model.Service, List<String>>> indexers) {}

      @Override
      public List<io.fabric8.kubernetes.api.model.Service> byIndex(String indexName, String indexKey) {
        return List.of();
      }

      @Override
      public Optional<io.fabric8.kubernetes.api.model.Service> get(
          io.javaoperatorsdk.operator.processing.event.ResourceID id) {
        return Optional.empty();
      }

      @Override
      public Stream<io.javaoperatorsdk.operator.processing.event.ResourceID> keys() {
        return Stream.empty();
      }

      @Override
      public Stream<io.fabric8.kubernetes.api.model.Service> list(
          java.util.function.Predicate<io.fabric8.kubernetes.api.model.Service> predicate) {
        return Stream.empty();
      }

      @Override
      public Stream<io.fabric8.kubernetes.api.model.Service> list(String namespace,
          java.util.function.Predicate<io.fabric8.kubernetes.api.model.Service> predicate) {
        return Stream.empty();
      }
    };
  }
}
