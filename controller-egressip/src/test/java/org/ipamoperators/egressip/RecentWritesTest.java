package org.ipamoperators.egressip;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnet;
import io.fabric8.openshift.api.model.miscellaneous.network.v1.HostSubnetBuilder;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** Our writes over a lagging informer: newer wins, deletions hide, objects we only patch vanish with the informer's. */
class RecentWritesTest {
  private static HostSubnet subnet(String rv, String... ips) {
    return new HostSubnetBuilder().withNewMetadata().withName("n1").withResourceVersion(rv).endMetadata()
        .withEgressIPs(List.of(ips)).build();
  }

  @Test
  void ourWriteShowsUntilTheInformerHasItsVersion() {
    RecentWrites<HostSubnet> w = RecentWrites.patched(UnaryOperator.identity());
    w.wrote(subnet("20", "192.0.2.1"));
    assertThat(w.view("n1", subnet("10")).getEgressIPs()).containsExactly("192.0.2.1");
    assertThat(w.view("n1", subnet("20", "192.0.2.1")).getMetadata().getResourceVersion()).isEqualTo("20");
    assertThat(w.pending()).isEmpty();
  }

  @Test
  void aPatchedObjectTheInformerNoLongerHasWasDeletedAndShowsNothing() {
    RecentWrites<HostSubnet> w = RecentWrites.patched(UnaryOperator.identity());
    w.wrote(subnet("20", "192.0.2.1"));
    assertThat(w.view("n1", null)).isNull();
    assertThat(w.pending()).isEmpty();
  }

  @Test
  void aCreatedObjectTheInformerDoesNotHaveYetIsOurs() {
    RecentWrites<HostSubnet> w = RecentWrites.created(UnaryOperator.identity());
    w.wrote(subnet("20", "192.0.2.1"));
    assertThat(w.view("n1", null).getEgressIPs()).containsExactly("192.0.2.1");
  }

  @Test
  void aDeletionHidesTheInformersStaleObjectUntilItsDeleteArrives() {
    RecentWrites<HostSubnet> w = RecentWrites.patched(UnaryOperator.identity());
    w.deleted("n1", "20");
    assertThat(w.view("n1", subnet("20", "192.0.2.1"))).isNull();
    assertThat(w.view("n1", subnet("15", "192.0.2.1"))).isNull();
    assertThat(w.view("n1", null)).isNull();
    assertThat(w.pending()).isEmpty();
    assertThat(w.view("n1", subnet("30", "192.0.2.9")).getEgressIPs()).containsExactly("192.0.2.9");
  }
}
