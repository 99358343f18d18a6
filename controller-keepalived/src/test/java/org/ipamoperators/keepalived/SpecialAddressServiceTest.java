package org.ipamoperators.keepalived;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LoadBalancerIngressBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import java.util.List;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.Test;

/** A Service never makes keepalived announce an address of the special table; its other VIPs still are. */
class SpecialAddressServiceTest {

  private static Service service(List<String> ingress, String... externalIps) {
    return new ServiceBuilder().withNewMetadata().withNamespace("ns").withName("s").endMetadata()
        .withNewSpec().withType("LoadBalancer").withExternalIPs(externalIps).endSpec()
        .withNewStatus().withNewLoadBalancer().withIngress(ingress.stream()
            .map(ip -> new LoadBalancerIngressBuilder().withIp(ip).build()).toList()).endLoadBalancer().endStatus()
        .build();
  }

  @Test
  void specialAddressesAreLeftOutEachWithAProblem() {
    AttachedService a = AttachedService.read(service(List.of("127.0.0.1", "169.254.169.254", "192.0.2.7", "fe80::1"),
        "224.0.0.18", "::", "2001:db8::7", "::ffff:192.0.2.8", "255.255.255.255"));
    assertThat(a.vips().vips()).containsExactly(Ip.parse("192.0.2.7"), Ip.parse("2001:db8::7"));
    assertThat(a.problems()).hasSize(7).allSatisfy(p -> assertThat(p).contains("never announced"));
    assertThat(a.problems()).anySatisfy(p -> assertThat(p).contains("127.0.0.1 is loopback"))
        .anySatisfy(p -> assertThat(p).contains("169.254.169.254 is the cloud instance metadata address"))
        .anySatisfy(p -> assertThat(p).contains("255.255.255.255 is the limited broadcast address"));
  }

  @Test
  void ordinaryAddressesRaiseNoProblem() {
    assertThat(AttachedService.read(service(List.of("192.0.2.7"), "2001:db8::7", "198.51.100.1")).problems())
        .isEmpty();
  }
}
