package org.ipamoperators.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.placement.IpDemand;
import org.ipamoperators.core.placement.NodeState;
import org.ipamoperators.core.placement.PlacementOptions;
import org.ipamoperators.core.placement.PlacementPlan;
import org.ipamoperators.core.placement.PlacementPlanner;
import org.junit.jupiter.api.Test;

/** The SPI used end to end the way a controller does: describe, plan, apply, read results. */
class NodeNetworkSpiTest {

  private static NodeRef ref(String name) {
    return new NodeRef(name, null, Map.of(), List.of());
  }

  @Test
  void aPlanIsCarriedOutAndOneBrokenNodeFailsOnlyItsOwnChanges() throws Exception {
    InMemoryNodeNetwork net = new InMemoryNodeNetwork(new NetworkCapabilities(true, true, true, true, true))
        .addNode("n1", "192.0.2.0/24", "192.0.2.10", 2)
        .addNode("n2", "192.0.2.0/24", "192.0.2.11", 2)
        .addNode("n3", "192.0.2.0/24", "192.0.2.12", 2)
        .addForeignAddress("192.0.2.99")
        .failNode("n3", "RequestLimitExceeded");

    assertThat(net.addressesInUse(IpRange.parse("192.0.2.0/24")))
        .contains(Ip.parse("192.0.2.10"), Ip.parse("192.0.2.99"));
    assertThatThrownBy(() -> net.describe(ref("n3"))).isInstanceOf(NodeNetworkException.class)
        .satisfies(e -> assertThat(((NodeNetworkException) e).errorCode()).isEqualTo("RequestLimitExceeded"));

    List<NodeState> nodes = List.of(
        new NodeState("n1", "a", true, net.describe(ref("n1")).capacity(), Set.of()),
        new NodeState("n2", "a", true, net.describe(ref("n2")).capacity(), Set.of()),
        new NodeState("n3", "a", true, 2, Set.of()));
    List<IpDemand> demands = List.of(
        new IpDemand(Ip.parse("192.0.2.20"), "a", "ns1"),
        new IpDemand(Ip.parse("192.0.2.21"), "a", "ns2"),
        new IpDemand(Ip.parse("192.0.2.22"), "a", "ns3"));
    PlacementPlan plan = PlacementPlanner.plan(nodes, demands, PlacementOptions.DEFAULT);
    List<AddressChangeResult> results = net.apply(AddressChange.of(plan));

    assertThat(results).hasSize(3);
    assertThat(results).filteredOn(AddressChangeResult::succeeded).hasSize(2);
    assertThat(results).filteredOn(r -> !r.succeeded()).singleElement().satisfies(r -> {
      assertThat(r.change().toNode()).isEqualTo("n3");
      assertThat(r.errorCode()).isEqualTo("RequestLimitExceeded");
      assertThat(r.retryable()).isTrue();
    });
    assertThat(net.secondaryOf("n1")).containsExactly(Ip.parse("192.0.2.20"));
    assertThat(net.secondaryOf("n2")).containsExactly(Ip.parse("192.0.2.21"));
  }

  @Test
  void movesAreMakeBeforeBreakAndChangesValidateTheirNodes() {
    InMemoryNodeNetwork net = new InMemoryNodeNetwork(new NetworkCapabilities(true, false, true, true, true))
        .addNode("n1", "192.0.2.0/24", "192.0.2.10", 5)
        .addNode("n2", "192.0.2.0/24", "192.0.2.11", 5);
    Ip ip = Ip.parse("192.0.2.30");
    net.apply(List.of(AddressChange.attach(ip, "n1")));
    assertThat(net.apply(List.of(AddressChange.move(ip, "n1", "n2")))).allMatch(AddressChangeResult::succeeded);
    assertThat(net.secondaryOf("n1")).isEmpty();
    assertThat(net.secondaryOf("n2")).containsExactly(ip);
    assertThatThrownBy(() -> AddressChange.move(ip, null, "n2")).hasMessageContaining("needs a source node");
    assertThatThrownBy(() -> AddressChange.attach(ip, null)).hasMessageContaining("needs a target node");
  }
}
