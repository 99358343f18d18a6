package org.ipamoperators.cloud.baremetal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeRef;
import org.junit.jupiter.api.Test;

class BareMetalNodeNetworkTest {

  @Test
  void capacityComesFromTheNodeOrIsUnlimited() {
    BareMetalNodeNetwork net = new BareMetalNodeNetwork();
    NodeAttachment limited = net.describe(new NodeRef("n1", null,
        Map.of(BareMetalNodeNetwork.CAPACITY_KEY, " 7 "), List.of(Ip.parse("192.0.2.10"))));
    assertThat(limited.capacity()).isEqualTo(7);
    assertThat(limited.primaryAddress()).isEqualTo(Ip.parse("192.0.2.10"));
    assertThat(net.describe(new NodeRef("n2", null, Map.of(), List.of())).capacity()).isEqualTo(NodeAttachment.UNLIMITED);
    assertThat(BareMetalNodeNetwork.capacityOf(Map.of(BareMetalNodeNetwork.CAPACITY_KEY, "lots"))).isEqualTo(NodeAttachment.UNLIMITED);
    assertThat(net.capabilities().requiresApiCalls()).isFalse();
  }

  @Test
  void nodeAddressesAreInUseAndEveryChangeApplies() {
    BareMetalNodeNetwork net = new BareMetalNodeNetwork();
    net.describe(new NodeRef("n1", null, Map.of(), List.of(Ip.parse("192.0.2.10"), Ip.parse("2001:db8::10"))));
    net.describe(new NodeRef("n2", null, Map.of(), List.of(Ip.parse("198.51.100.10"))));
    assertThat(net.addressesInUse(IpRange.parse("192.0.2.0/24"))).containsExactly(Ip.parse("192.0.2.10"));
    assertThat(net.addressesInUse(IpRange.parse("2001:db8::/64"))).containsExactly(Ip.parse("2001:db8::10"));
    List<AddressChangeResult> r = net.apply(List.of(AddressChange.attach(Ip.parse("192.0.2.50"), "n1"),
        AddressChange.move(Ip.parse("192.0.2.51"), "n1", "n2")));
    assertThat(r).hasSize(2).allMatch(AddressChangeResult::succeeded);
  }
}
