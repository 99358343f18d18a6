package org.ipamoperators.core.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class LedgerAuditTest {
  private static final Instant NOW = Instant.parse("2026-11-23T12:00:00Z");
  private static final Instant OLD = NOW.minus(Duration.ofHours(1));
  private static final Resource A = Resource.ip("192.0.2.7");

  private static LedgerEntry claim(Resource r, String owner, Instant at, boolean ownerExists) {
    return new LedgerEntry(r, owner, "IPClaim " + r.value().replace('.', '-'), at, ownerExists);
  }

  private static Publication shown(Resource r, String holder) {
    return new Publication(r, holder, "Service " + holder + " status.loadBalancer.ingress");
  }

  @Test
  void agreementIsClean() {
    AuditReport report = LedgerAudit.audit(List.of(claim(A, "default/web", OLD, true)),
        List.of(shown(A, "default/web")), AuditOptions.at(NOW));
    assertThat(report.clean()).isTrue();
    assertThat(report.repairs()).isEmpty();
    assertThat(report.counts()).containsEntry(FindingKind.DUPLICATE, 0).hasSize(FindingKind.values().length);
  }

  @Test
  void twoHoldersOfOneAddressIsADuplicateNamingBothAndTheClaimOwner() {
    AuditReport report = LedgerAudit.audit(List.of(claim(A, "default/svc-767", OLD, true)),
        List.of(shown(A, "default/svc-767"), shown(A, "default/svc-769")), AuditOptions.at(NOW));
    assertThat(report.findings()).extracting(Finding::kind)
        .containsExactly(FindingKind.DUPLICATE, FindingKind.DRIFT);
    Finding dup = report.findings().get(0);
    assertThat(dup.parties()).containsExactly("default/svc-767", "default/svc-769");
    assertThat(dup.message()).contains("192.0.2.7 is published by 2 holders")
        .contains("the ledger names default/svc-767");
    assertThat(report.findings().get(1).message()).contains("published for default/svc-769");
    assertThat(report.repairs()).isEmpty();
  }

  @Test
  void anUnclaimedPublicationIsAnOrphan() {
    AuditReport report = LedgerAudit.audit(List.of(), List.of(shown(A, "ns/a")), AuditOptions.at(NOW));
    assertThat(report.findings()).singleElement().satisfies(f -> {
      assertThat(f.kind()).isEqualTo(FindingKind.ORPHAN);
      assertThat(f.message()).contains("no ledger claims it");
    });
  }

  @Test
  void anOldUnpublishedClaimIsALeakAndOnlyAGoneOwnersClaimIsReleased() {
    Resource b = Resource.ip("192.0.2.8");
    Resource young = Resource.ip("192.0.2.9");
    Resource unknownAge = Resource.ip("192.0.2.10");
    AuditReport report = LedgerAudit.audit(List.of(
        claim(A, "ns/alive", OLD, true),
        claim(b, "ns/gone", OLD, false),
        claim(young, "ns/gone-too", NOW.minusSeconds(10), false),
        claim(unknownAge, "ns/gone-three", null, false)), List.of(), AuditOptions.at(NOW));
    assertThat(report.findings()).extracting(Finding::kind, Finding::resource)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(FindingKind.LEAK, A),
            org.assertj.core.groups.Tuple.tuple(FindingKind.LEAK, b));
    assertThat(report.findings().get(0).message()).contains("only reported");
    assertThat(report.repairs()).singleElement().satisfies(rep -> {
      assertThat(rep.entry().owner()).isEqualTo("ns/gone");
      assertThat(rep.reason()).contains("no longer exists");
    });
  }

  @Test
  void twoClaimsOfOneNumberAreADoubleClaim() {
    Resource id = new Resource("vrrp/default", "7");
    AuditReport report = LedgerAudit.audit(List.of(claim(id, "ns/g1", OLD, true), claim(id, "ns/g2", OLD, true)),
        List.of(shown(id, "ns/g1")), AuditOptions.at(NOW));
    assertThat(report.findings()).extracting(Finding::kind).containsExactly(FindingKind.DOUBLE_CLAIM);
    assertThat(report.findings().get(0).message()).startsWith("vrrp/default:7 is claimed by 2 owners");
  }

  @Test
  void aNegativeGraceIsRefused() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new AuditOptions(NOW, Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leakGrace");
  }
}
