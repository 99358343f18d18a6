package org.ipamoperators.egressip.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.Map;
import org.ipamoperators.egressip.api.EgressAnnotations;
import org.junit.jupiter.api.Test;

/** What the EgressIP informer keeps of an object, and which of its updates start a pass. */
class OvnWriterTrimTest {
  private static GenericKubernetesResource egressIp(String rv, String ipam, List<String> ips, String node) {
    return Serialization.unmarshal("""
        {"apiVersion":"k8s.ovn.org/v1","kind":"EgressIP",
         "metadata":{"name":"egressipam-web","resourceVersion":"%s","uid":"u1",
           "labels":{"%s":"%s","team":"x"},"annotations":{"note":"y"},
           "managedFields":[{"manager":"ovnkube","operation":"Update"}]},
         "spec":{"egressIPs":%s,"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"web"}}},
         "status":{"items":[{"node":"%s","egressIP":"192.0.2.1"}]}}
        """.formatted(rv, EgressAnnotations.MANAGED_BY, ipam, Serialization.asJson(ips), node),
        GenericKubernetesResource.class);
  }

  @Test
  void theInformerKeepsNameUidVersionOurLabelAndTheAddressesOnly() {
    GenericKubernetesResource t = OvnWriter.trimmed(egressIp("42", "a", List.of("192.0.2.1"), "n1"));
    assertThat(t.getMetadata().getName()).isEqualTo("egressipam-web");
    assertThat(t.getMetadata().getResourceVersion()).isEqualTo("42");
    assertThat(t.getMetadata().getUid()).as("a delete is conditioned on it").isEqualTo("u1");
    assertThat(t.getMetadata().getLabels()).isEqualTo(Map.of(EgressAnnotations.MANAGED_BY, "a"));
    assertThat(t.getMetadata().getAnnotations()).isNullOrEmpty();
    assertThat(t.getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(t.getAdditionalProperties()).containsOnlyKeys("spec")
        .containsEntry("spec", Map.of("egressIPs", List.of("192.0.2.1")));
    assertThat(OvnWriter.ipamOf(t)).isEqualTo("a");
  }

  @Test
  void onlyAChangeOfTheAddressesOrOfOurLabelStartsAPass() {
    GenericKubernetesResource before = egressIp("1", "a", List.of("192.0.2.1"), "n1");
    assertThat(OvnWriter.changed(egressIp("2", "a", List.of("192.0.2.1"), "n2"), before))
        .as("OVN moved the address to another node: its status only").isFalse();
    assertThat(OvnWriter.changed(egressIp("2", "a", List.of("192.0.2.9"), "n1"), before)).isTrue();
    assertThat(OvnWriter.changed(egressIp("2", "b", List.of("192.0.2.1"), "n1"), before)).isTrue();
  }
}
