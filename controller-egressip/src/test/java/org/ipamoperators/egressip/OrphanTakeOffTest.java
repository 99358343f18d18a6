package org.ipamoperators.egressip;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpRange;
import org.ipamoperators.core.spi.AddressChange;
import org.ipamoperators.core.spi.AddressChangeResult;
import org.ipamoperators.core.spi.NetworkCapabilities;
import org.ipamoperators.core.spi.NodeAttachment;
import org.ipamoperators.core.spi.NodeNetwork;
import org.ipamoperators.core.spi.NodeRef;
import org.ipamoperators.egressip.plan.Orphans;
import org.junit.jupiter.api.Test;

/** The last check before an orphan is taken off: the ledger as the API server has it now. */
class OrphanTakeOffTest {
  private static final Instant T0 = Instant.parse("2026-11-23T12:00:00Z");

  /** A network that records what it is asked and fails the changes of one address. */
  private static final class Recording implements NodeNetwork {
    final List<AddressChange> asked = new ArrayList<>();
    final Ip failing;

    Recording(Ip failing) {
      this.failing = failing;
    }

    @Override
    public NetworkCapabilities capabilities() {
      return new NetworkCapabilities(true, true, true, true, true);
    }

    @Override
    public NodeAttachment describe(NodeRef node) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Set<Ip> addressesInUse(IpRange subnet) {
      return Set.of();
    }

    @Override
    public List<AddressChangeResult> apply(List<AddressChange> changes) {
      asked.addAll(changes);
      return changes.stream().map(c -> c.address().equals(failing)
          ? AddressChangeResult.failed(c, "Throttling", "slow down", true) : AddressChangeResult.applied(c)).toList();
    }
  }

  private static Orphans.Orphan orphan(String ip) {
    return new Orphans.Orphan(Ip.parse(ip), "n1", T0, 3);
  }

  @Test
  void anAddressClaimedInTheApiServerSinceThePlanIsLeftOn() {
    Recording network = new Recording(Ip.parse("192.0.2.3"));
    OrphanTakeOff.Outcome out = OrphanTakeOff.run(List.of(orphan("192.0.2.1"), orphan("192.0.2.2"), orphan("192.0.2.3")),
        ip -> ip.equals(Ip.parse("192.0.2.2")), network);
    assertThat(network.asked).extracting(AddressChange::address)
        .containsExactly(Ip.parse("192.0.2.1"), Ip.parse("192.0.2.3"))
        .doesNotContain(Ip.parse("192.0.2.2"));
    assertThat(network.asked).allSatisfy(c -> {
      assertThat(c.kind()).isEqualTo(AddressChange.Kind.DETACH);
      assertThat(c.fromNode()).isEqualTo("n1");
    });
    assertThat(out.takenOff()).extracting(Orphans.Orphan::address).containsExactly(Ip.parse("192.0.2.1"));
    assertThat(out.claimed()).extracting(Orphans.Orphan::address).containsExactly(Ip.parse("192.0.2.2"));
    assertThat(out.failures()).singleElement().asString().contains("192.0.2.3", "n1", "Throttling");
  }

  @Test
  void everythingClaimedMeansNoCallAtAll() {
    Recording network = new Recording(null);
    OrphanTakeOff.Outcome out = OrphanTakeOff.run(List.of(orphan("192.0.2.1")), ip -> true, network);
    assertThat(network.asked).isEmpty();
    assertThat(out.takenOff()).isEmpty();
  }
}
