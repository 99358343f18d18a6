package org.ipamoperators.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.ipamoperators.cli.Surfaces.Entry;
import org.ipamoperators.cli.Surfaces.Surface;
import org.junit.jupiter.api.Test;

/** The rules the reliability runs apply to every snapshot of every publication surface. */
class SnapshotCheckTest {

  @Test
  void oneAddressOnTwoNamespacesThroughDifferentSurfacesIsTwoHolders() {
    SnapshotCheck c = new SnapshotCheck();
    c.check(List.of(new Entry(Surface.NAMESPACE_ANNOTATION, "namespace b", "192.0.2.1"),
        new Entry(Surface.NET_NAMESPACE, "namespace a", "192.0.2.1")));
    assertThat(c.duplicates()).containsExactly(
        "192.0.2.1 on namespace a [NetNamespace.egressIPs] and namespace b [namespace annotation egressips]");
  }

  @Test
  void oneNamespaceShowingItsAddressOnEverySurfaceIsOneHolder() {
    SnapshotCheck c = new SnapshotCheck();
    c.check(List.of(new Entry(Surface.NAMESPACE_ANNOTATION, "namespace a", "192.0.2.1"),
        new Entry(Surface.NET_NAMESPACE, "namespace a", "192.0.2.1"),
        new Entry(Surface.OVN_EGRESS_IP, "namespace a", "192.0.2.1"),
        new Entry(Surface.HOST_SUBNET_IPS, "node n1", "192.0.2.1"),
        new Entry(Surface.LEDGER, "namespace a", "192.0.2.1")), true);
    assertThat(c.duplicates()).isEmpty();
    assertThat(c.unclaimed()).isEmpty();
  }

  @Test
  void oneAddressOnTwoHostSubnetsOrOneVipInTwoGroupsIsADuplicate() {
    SnapshotCheck c = new SnapshotCheck();
    c.check(List.of(new Entry(Surface.HOST_SUBNET_IPS, "node n1", "192.0.2.1"),
        new Entry(Surface.HOST_SUBNET_IPS, "node n2", "192.0.2.1"),
        new Entry(Surface.KEEPALIVED_CONFIG, "KeepalivedGroup x/a", "192.0.2.9"),
        new Entry(Surface.KEEPALIVED_CONFIG, "KeepalivedGroup x/b", "192.0.2.9")));
    assertThat(c.duplicates()).hasSize(2);
  }

  @Test
  void aNodeHostingANamespacesAddressIsNotASecondHolder() {
    SnapshotCheck c = new SnapshotCheck();
    c.check(List.of(new Entry(Surface.NET_NAMESPACE, "namespace a", "192.0.2.1"),
        new Entry(Surface.HOST_SUBNET_IPS, "node n1", "192.0.2.1")));
    assertThat(c.duplicates()).isEmpty();
  }

  @Test
  void anAddressShownWhileTheLedgerHoldsItForAnotherOrNobodyBreaksTheClaimRule() {
    SnapshotCheck c = new SnapshotCheck();
    c.check(List.of(new Entry(Surface.NET_NAMESPACE, "namespace a", "192.0.2.1"),
        new Entry(Surface.LEDGER, "namespace b", "192.0.2.1"),
        new Entry(Surface.NAMESPACE_ANNOTATION, "namespace c", "192.0.2.2")), true);
    assertThat(c.unclaimed()).containsExactlyInAnyOrder(
        "192.0.2.1 shown by namespace a (NetNamespace.egressIPs) but held in the ledger by [namespace b]",
        "192.0.2.2 shown by namespace c (namespace annotation egressips) but held in the ledger by [nobody]");
  }

  @Test
  void withoutALedgerReadTheClaimRuleDoesNotApply() {
    SnapshotCheck c = new SnapshotCheck();
    c.check(List.of(new Entry(Surface.NAMESPACE_ANNOTATION, "namespace c", "192.0.2.2")));
    assertThat(c.unclaimed()).isEmpty();
  }

  @Test
  void vipsAreReadFromBothVirtualAddressBlocks() {
    String conf = """
        vrrp_instance a_1 {
            interface eth0
            virtual_router_id 7
            virtual_ipaddress {
                192.0.2.1
                192.0.2.2/32
            }
            virtual_ipaddress_excluded {
                2001:db8::1
            }
            track_script {
                chk
            }
        }
        """;
    assertThat(Surfaces.vips(conf)).containsExactly("192.0.2.1", "192.0.2.2", "2001:db8::1");
  }
}
