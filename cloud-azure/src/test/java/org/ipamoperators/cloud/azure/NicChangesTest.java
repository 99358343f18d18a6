package org.ipamoperators.cloud.azure;

import static org.assertj.core.api.Assertions.assertThat;

import com.azure.resourcemanager.network.fluent.models.BackendAddressPoolInner;
import com.azure.resourcemanager.network.fluent.models.NetworkInterfaceIpConfigurationInner;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.AddressChangeResult.Outcome;
import org.junit.jupiter.api.Test;

/** Which of one NIC's changes go into its PUT and which are settled without it, from the configurations as read. */
class NicChangesTest {
  private static final String SUBNET = "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Network/"
      + "virtualNetworks/vnet1/subnets/worker";
  private static final String WHERE = "NIC nic1 of node n1 (VM vm1)";
  private static final String POOL = "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Network/"
      + "loadBalancers/lb1/backendAddressPools/pool1";

  private final List<AddressChange> changes = new ArrayList<>();
  private final Map<Ip, Integer> removes = new LinkedHashMap<>();
  private final Map<Ip, Integer> adds = new LinkedHashMap<>();

  private static Ip ip(String s) {
    return Ip.parse(s);
  }

  private static NetworkInterfaceIpConfigurationInner config(String name, String address, boolean primary) {
    return new NetworkInterfaceIpConfigurationInner().withName(name).withPrivateIpAddress(address).withPrimary(primary);
  }

  private static NetworkInterfaceIpConfigurationInner primary() {
    return config("ipconfig1", "10.0.1.4", true);
  }

  private static NetworkInterfaceIpConfigurationInner ours(String address) {
    return config(NicEdit.ownedName(ip(address)), address, false);
  }

  private void remove(AddressChange c) {
    changes.add(c);
    removes.put(c.address(), changes.size() - 1);
  }

  private void add(AddressChange c) {
    changes.add(c);
    adds.put(c.address(), changes.size() - 1);
  }

  private NicChanges.Decision decide(int perNic, List<NetworkInterfaceIpConfigurationInner> cfgs) {
    return new NicChanges(changes, removes, adds, WHERE, perNic).decide(cfgs,
        new AddressChangeResult[changes.size()], Set.of());
  }

  @Test
  void onlyThisOperatorsConfigurationsAreRemovedAndAbsentOnesAreDone() {
    remove(AddressChange.detach(ip("10.0.1.10"), "n1")); // ours: removed by the PUT
    remove(AddressChange.detach(ip("10.0.1.11"), "n1")); // absent: done without a PUT
    remove(AddressChange.detach(ip("10.0.1.9"), "n1")); // another tool's: left alone
    remove(AddressChange.move(ip("10.0.1.12"), "n1", "n2")); // another tool's: not moved
    remove(AddressChange.move(ip("10.0.1.13"), "n1", "n2")); // absent: already gone from here
    remove(AddressChange.detach(ip("10.0.1.4"), "n1")); // the primary: left alone

    NicChanges.Decision d = decide(256, List.of(primary(), ours("10.0.1.10"), config("cni1", "10.0.1.9", false),
        config("cni2", "10.0.1.12", false)));

    assertThat(d.remove()).containsExactly(ip("10.0.1.10"));
    assertThat(d.add()).isEmpty();
    assertThat(d.results()).containsOnlyKeys(1, 2, 3, 5);
    assertThat(d.results().get(1).outcome()).isEqualTo(Outcome.APPLIED);
    assertThat(d.results().get(2).outcome()).isEqualTo(Outcome.SKIPPED);
    assertThat(d.results().get(2).message()).contains("cni1", "did not create");
    assertThat(d.results().get(3).outcome()).isEqualTo(Outcome.FAILED);
    assertThat(d.results().get(3).errorCode()).isEqualTo("AddressInUse");
    assertThat(d.results().get(5).outcome()).isEqualTo(Outcome.SKIPPED);
    assertThat(d.alreadyGone()).containsExactly(ip("10.0.1.13"));
    assertThat(d.onNic()).containsExactlyInAnyOrder(ip("10.0.1.4"), ip("10.0.1.10"), ip("10.0.1.9"), ip("10.0.1.12"));
  }

  @Test
  void anAbsentDetachAlreadySettledKeepsItsResult() {
    remove(AddressChange.detach(ip("10.0.1.11"), "n1"));
    AddressChangeResult[] earlier = {AddressChangeResult.failed(changes.get(0), "X", "earlier", true)};

    NicChanges.Decision d = new NicChanges(changes, removes, adds, WHERE, 256).decide(List.of(primary()), earlier,
        Set.of());

    assertThat(d.results()).isEmpty();
  }

  @Test
  void additionsSkipAnotherToolsAddressesEarlierFailuresAndDroppedOnesAndReuseOurs() {
    add(AddressChange.attach(ip("10.0.1.20"), "n1")); // new
    add(AddressChange.attach(ip("10.0.1.9"), "n1")); // another tool's on this NIC
    add(AddressChange.attach(ip("10.0.1.21"), "n1")); // ours already there: kept in the PUT
    add(AddressChange.attach(ip("10.0.1.22"), "n1")); // failed earlier
    add(AddressChange.move(ip("10.0.1.23"), "n0", "n1")); // dropped after a conflict
    AddressChangeResult[] earlier = new AddressChangeResult[changes.size()];
    earlier[3] = AddressChangeResult.failed(changes.get(3), "PrivateIPAddressNotInSubnet", "earlier", false);

    NicChanges.Decision d = new NicChanges(changes, removes, adds, WHERE, 256).decide(List.of(primary(),
        config("cni1", "10.0.1.9", false), ours("10.0.1.21")), earlier, Set.of(ip("10.0.1.23")));

    assertThat(d.add()).containsExactly(ip("10.0.1.20"), ip("10.0.1.21"));
    assertThat(d.results()).containsOnlyKeys(1);
    assertThat(d.results().get(1).errorCode()).isEqualTo("AddressInUse");
  }

  @Test
  void newConfigurationsBeyondTheLimitFailAndRemovalsMakeRoom() {
    add(AddressChange.attach(ip("10.0.1.20"), "n1"));
    add(AddressChange.attach(ip("10.0.1.21"), "n1"));
    add(AddressChange.attach(ip("10.0.1.22"), "n1"));
    remove(AddressChange.detach(ip("10.0.1.10"), "n1"));
    List<NetworkInterfaceIpConfigurationInner> cfgs = List.of(primary(), ours("10.0.1.10"), ours("10.0.1.11"));

    NicChanges.Decision d = decide(4, cfgs); // 3 - 1 removed = 2 after: room for 2 of the 3

    assertThat(d.add()).containsExactly(ip("10.0.1.20"), ip("10.0.1.21"));
    assertThat(d.results()).containsOnlyKeys(2);
    assertThat(d.results().get(2).errorCode()).isEqualTo("NicIpConfigurationLimit");
    assertThat(d.results().get(2).message()).contains("already has 2 ipConfigurations; Azure allows 4");
  }

  @Test
  void whatNoPutCouldPlaceFailsAlone() {
    List<IpRange> v4 = List.of(IpRange.parse("10.0.1.0/24"));
    AddressChange c = AddressChange.attach(ip("10.0.1.20"), "n1");

    assertThat(NicChanges.unplaceable(ip("10.0.1.20"), c, v4, SUBNET, WHERE)).isEmpty();
    assertThat(NicChanges.unplaceable(ip("10.0.2.20"), c, v4, SUBNET, WHERE)).get()
        .extracting(AddressChangeResult::errorCode).isEqualTo("PrivateIPAddressNotInSubnet");
    assertThat(NicChanges.unplaceable(ip("2001:db8::20"), c, v4, SUBNET, WHERE)).get()
        .extracting(AddressChangeResult::errorCode).isEqualTo("SubnetHasNoIpv6");
    for (String reserved : List.of("10.0.1.0", "10.0.1.1", "10.0.1.2", "10.0.1.3", "10.0.1.255")) {
      assertThat(NicChanges.unplaceable(ip(reserved), c, v4, SUBNET, WHERE)).get()
          .extracting(AddressChangeResult::errorCode).isEqualTo("PrivateIPAddressInReservedRange");
    }
    assertThat(NicChanges.unplaceable(ip("10.0.1.4"), c, v4, SUBNET, WHERE)).isEmpty();
  }

  @Test
  void aNicAsWantedNeedsNoFreshRead() {
    add(AddressChange.attach(ip("10.0.1.21"), "n1"));
    remove(AddressChange.detach(ip("10.0.1.9"), "n1")); // another tool's: never removed, so no change
    NicChanges wanted = new NicChanges(changes, removes, adds, WHERE, 256);
    NetworkInterfaceIpConfigurationInner mine = ours("10.0.1.21");
    List<NetworkInterfaceIpConfigurationInner> cfgs = List.of(primary(), mine, config("cni1", "10.0.1.9", false));

    assertThat(wanted.wouldChange(cfgs, List.of())).isFalse();
    assertThat(wanted.wouldChange(cfgs, List.of(POOL))).as("pools to follow").isTrue();
    mine.withLoadBalancerBackendAddressPools(List.of(new BackendAddressPoolInner().withId(POOL.toUpperCase())));
    assertThat(wanted.wouldChange(cfgs, List.of(POOL))).as("pool ids compare without case").isFalse();
    assertThat(wanted.wouldChange(List.of(primary(), config("cni1", "10.0.1.9", false)), List.of()))
        .as("an addition missing").isTrue();
    assertThat(wanted.wouldChange(List.of(primary(), mine, ours("10.0.1.9")), List.of(POOL)))
        .as("our configuration of a removal still there").isTrue();
  }
}
