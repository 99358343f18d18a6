package org.ipamoperators.keepalived;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import java.util.Map;
import java.util.Optional;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.api.KeepalivedGroupSpec;
import org.junit.jupiter.api.Test;

/** The bad-input corpus's keepalived findings, without an API server. */
class BadInputTest {
  private static Service service(Map<String, String> annotations) {
    return new ServiceBuilder().withNewMetadata().withNamespace("ns").withName("s").withAnnotations(annotations)
        .endMetadata().withNewSpec().withType("ClusterIP").withExternalIPs("192.0.2.10").endSpec().build();
  }

  @Test
  void aVerbatimAnnotationOver512CharactersIsRefusedWithTheReason() {
    String big = "{\"garp_master_delay\": \"" + "1".repeat(600) + "\"}";
    AttachedService a = AttachedService.read(service(Map.of(KeepalivedAnnotations.VERBATIM_CONFIG, big)));
    assertThat(a.vips().verbatim()).isEmpty();
    assertThat(a.problems()).singleElement().asString().contains("more than the 512");
    AttachedService ok = AttachedService.read(service(Map.of(KeepalivedAnnotations.VERBATIM_CONFIG,
        "{\"garp_master_delay\": \"1\"}")));
    assertThat(ok.problems()).isEmpty();
    assertThat(ok.vips().verbatim()).containsEntry("garp_master_delay", "1");
  }

  @Test
  void aSpreadvipsValueThatIsNotABooleanIsReported() {
    assertThat(AttachedService.read(service(Map.of(KeepalivedAnnotations.SPREAD_VIPS, "yes"))).problems())
        .singleElement().asString().contains("'yes', not true or false");
    assertThat(AttachedService.read(service(Map.of(KeepalivedAnnotations.SPREAD_VIPS, "False"))).problems()).isEmpty();
    assertThat(AttachedService.read(service(Map.of(KeepalivedAnnotations.SPREAD_VIPS, "true"))).vips().spread())
        .isTrue();
  }

  @Test
  void anIpv4MappedInterfaceFromIpIsAnInvalidSpec() {
    KeepalivedGroup g = new KeepalivedGroup();
    g.setMetadata(new ObjectMetaBuilder().withNamespace("kg").withName("g1").build());
    g.setSpec(new KeepalivedGroupSpec(null, null, "::ffff:192.0.2.1", null, null, null, null, null, null, null, null,
        null, null, null, null, null, null, null, null, null));
    assertThatThrownBy(() -> GroupSpecs.settings(g, Optional.empty())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("IPv4-mapped").hasMessageContaining("192.0.2.1");
  }
}
