package org.ipamoperators.vip.legacy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LegacyReservationsTest {
  private static GenericKubernetesResource virtualIp(String service, String ip, String state, boolean deleting) {
    GenericKubernetesResource v = new GenericKubernetesResourceBuilder().withApiVersion("paas.org/v1").withKind("VirtualIP")
        .withNewMetadata().withName("v-" + service).withNamespace("ns")
        .withDeletionTimestamp(deleting ? "2026-11-27T00:00:00Z" : null).endMetadata().build();
    v.getAdditionalProperties().put("spec", Map.of("service", service));
    Map<String, Object> status = new HashMap<>();
    status.put("ip", ip);
    status.put("state", state);
    v.getAdditionalProperties().put("status", status);
    return v;
  }

  @Test
  void aValidOrMigratingVirtualIpOfTheServiceReservesItsAddress() {
    List<GenericKubernetesResource> v = List.of(virtualIp("app", "198.51.100.4", "Valid", false),
        virtualIp("app", "198.51.100.5", LegacyKinds.PREPARING, false));
    assertThat(LegacyReservations.reserved(v, "app", List.of("198.51.100.4", "198.51.100.5", "198.51.100.6")))
        .containsExactlyInAnyOrder("198.51.100.4", "198.51.100.5");
  }

  @Test
  void migratedDeletedOrOtherServicesVirtualIpsReserveNothing() {
    List<GenericKubernetesResource> v = List.of(virtualIp("app", "198.51.100.4", LegacyKinds.MIGRATED, false),
        virtualIp("app", "198.51.100.5", "Valid", true), virtualIp("other", "198.51.100.6", "Valid", false),
        virtualIp("app", "not-an-address", "Valid", false));
    assertThat(LegacyReservations.reserved(v, "app", List.of("198.51.100.4", "198.51.100.5", "198.51.100.6")))
        .isEmpty();
  }

  @Test
  void addressesAreComparedInCanonicalForm() {
    List<GenericKubernetesResource> v = List.of(virtualIp("app", "2001:DB8:0:0::7", "Valid", false));
    assertThat(LegacyReservations.reserved(v, "app", Set.of("2001:db8::7"))).containsExactly("2001:db8::7");
  }
}
