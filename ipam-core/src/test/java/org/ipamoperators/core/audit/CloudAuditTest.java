package org.ipamoperators.core.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The audit of egress addresses against the clouds' interfaces. */
class CloudAuditTest {
  private static final Instant NOW = Instant.parse("2026-11-23T12:00:00Z");
  private static final Instant OLD = NOW.minus(Duration.ofHours(1));
  private static final Resource A = Resource.ip("198.51.100.10");
  private static final String NS = "egressip/Namespace/team-a";
  private static final Set<String> NODES = Set.of("a1", "a2");

  private static LedgerEntry claim(boolean ownerExists) {
    return new LedgerEntry(A, NS, "IPClaim 198-51-100-10", OLD, ownerExists);
  }

  private static Publication annotated() {
    return new Publication(A, NS, "Namespace team-a annotation egressips");
  }

  private static Attachment on(String node) {
    return new Attachment(A, node, "ENI eni-" + node + " of node " + node);
  }

  private static Placement placed(String node) {
    return new Placement(A, node, "HostSubnet " + node + " egressIPs");
  }

  private static AuditReport audit(List<LedgerEntry> cs, List<Publication> ps, CloudView cloud) {
    return LedgerAudit.audit(cs, ps, cloud, AuditOptions.at(NOW));
  }

  @Test
  void anAddressOnTheInterfaceOfTheNodeThatRoutesItIsClean() {
    AuditReport r = audit(List.of(claim(true)), List.of(annotated()),
        CloudView.of(List.of(on("a1")), List.of(placed("a1")), NODES, Map.of()));
    assertThat(r.findings()).isEmpty();
  }

  @Test
  void anAttachedAddressNobodyClaimsIsAnOrphanAndNothingIsRepaired() {
    AuditReport r = audit(List.of(), List.of(), CloudView.of(List.of(on("a2")), List.of(), NODES, Map.of()));
    assertThat(r.findings()).singleElement().satisfies(f -> {
      assertThat(f.kind()).isEqualTo(FindingKind.ORPHAN);
      assertThat(f.parties()).containsExactly("a2");
      assertThat(f.message()).contains("ENI eni-a2 of node a2").contains("claimed by nobody")
          .contains("the audit only reports it");
    });
    assertThat(r.repairs()).isEmpty();
  }

  @Test
  void anAddressOnTwoNodesInterfacesIsADuplicate() {
    AuditReport r = audit(List.of(claim(true)), List.of(annotated()),
        CloudView.of(List.of(on("a1"), on("a2")), List.of(placed("a1")), NODES, Map.of()));
    assertThat(r.findings()).extracting(Finding::kind).containsExactly(FindingKind.DUPLICATE, FindingKind.DRIFT);
    assertThat(r.findings().get(0).parties()).containsExactly("a1", "a2");
    assertThat(r.findings().get(1).message()).contains("is on ENI eni-a2 of node a2, a node the cluster network"
        + " does not route it through (a1 in HostSubnet a1 egressIPs)");
  }

  @Test
  void anAddressRoutedThroughANodeWhoseInterfaceLacksItIsDriftNamingWhereItIs() {
    AuditReport r = audit(List.of(claim(true)), List.of(annotated()),
        CloudView.of(List.of(on("a2")), List.of(placed("a1")), NODES, Map.of()));
    assertThat(r.findings()).singleElement().satisfies(f -> {
      assertThat(f.kind()).isEqualTo(FindingKind.DRIFT);
      assertThat(f.parties()).containsExactly("a1", "a2");
      assertThat(f.message()).contains("is routed through a1 (HostSubnet a1 egressIPs) but is not on that node's"
          + " interface").contains("is on ENI eni-a2 of node a2");
    });
  }

  @Test
  void anAddressOnNoInterfaceIsDriftWhenEveryNodeWasRead() {
    AuditReport r = audit(List.of(claim(true)), List.of(annotated()),
        CloudView.of(List.of(), List.of(placed("a1")), NODES, Map.of()));
    assertThat(r.findings()).singleElement().satisfies(f -> {
      assertThat(f.kind()).isEqualTo(FindingKind.DRIFT);
      assertThat(f.message()).endsWith("it is on no node's interface");
    });
  }

  @Test
  void aNodeThatCannotBeReadIsUnknownNeverAnAddressMissing() {
    AuditReport r = audit(List.of(claim(true)), List.of(annotated()),
        CloudView.of(List.of(), List.of(placed("a1")), Set.of("a2"), Map.of("a1", "DescribeInstances: throttled")));
    assertThat(r.findings()).singleElement().satisfies(f -> {
      assertThat(f.kind()).isEqualTo(FindingKind.UNKNOWN);
      assertThat(f.resource()).isEqualTo(new Resource("node", "a1"));
      assertThat(f.message()).contains("node a1 could not be read (DescribeInstances: throttled)");
    });
  }

  @Test
  void aClaimStillAttachedIsALeakButNeverReleased() {
    AuditReport r = audit(List.of(claim(false)), List.of(),
        CloudView.of(List.of(on("a1")), List.of(), NODES, Map.of()));
    assertThat(r.findings()).extracting(Finding::kind).containsExactly(FindingKind.LEAK);
    assertThat(r.findings().get(0).message()).contains("still on a cloud interface");
    assertThat(r.repairs()).isEmpty();
    // The same claim with nothing attached is released: the attachment alone holds it back.
    assertThat(audit(List.of(claim(false)), List.of(), CloudView.of(List.of(), List.of(), NODES, Map.of()))
        .repairs()).hasSize(1);
  }

  @Test
  void withoutTheCloudNoCloudFindingIsMade() {
    AuditReport r = audit(List.of(claim(true)), List.of(annotated()), CloudView.NONE);
    assertThat(r.findings()).isEmpty();
  }
}
