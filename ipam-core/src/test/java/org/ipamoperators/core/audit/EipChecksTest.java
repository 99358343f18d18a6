package org.ipamoperators.core.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Eip objects' status against the Elastic IPs EC2 has. */
class EipChecksTest {
  private static final String WEB = "eip/Eip/prod/web";
  private static final String API = "eip/Eip/prod/api";

  private static EipShown shown(String owner, String alloc, String eni, String ip) {
    return new EipShown(owner, alloc, eni, ip, "Eip " + owner.substring(8) + " status");
  }

  private static ElasticAddress ec2(String alloc, String owner, String eni, String ip) {
    return new ElasticAddress(alloc, "198.51.100.9", owner, eni, ip);
  }

  @Test
  void anEipShowingItsTaggedAssociatedAllocationIsClean() {
    assertThat(EipChecks.check(List.of(shown(WEB, "eipalloc-1", "eni-1", "10.0.0.5")),
        List.of(ec2("eipalloc-1", WEB, "eni-1", "10.0.0.5")))).isEmpty();
  }

  @Test
  void anAllocationEc2DoesNotHaveIsDrift() {
    assertThat(EipChecks.check(List.of(shown(WEB, "eipalloc-1", null, null)), List.of())).singleElement()
        .satisfies(f -> {
          assertThat(f.kind()).isEqualTo(FindingKind.DRIFT);
          assertThat(f.message()).contains("EC2 does not have it");
        });
  }

  @Test
  void twoEipsShowingOneAllocationIsADuplicate() {
    List<Finding> f = EipChecks.check(List.of(shown(WEB, "eipalloc-1", null, null), shown(API, "eipalloc-1", null, null)),
        List.of(ec2("eipalloc-1", WEB, null, null)));
    assertThat(f).extracting(Finding::kind).containsExactly(FindingKind.DUPLICATE, FindingKind.DRIFT);
    assertThat(f.get(0).parties()).containsExactly(API, WEB);
    assertThat(f.get(1).message()).contains("EC2 tags it for " + WEB);
  }

  @Test
  void aTaggedAllocationNoEipShowsIsALeakUnlessItsEipIsStillGettingOne() {
    assertThat(EipChecks.check(List.of(), List.of(ec2("eipalloc-2", WEB, null, null)))).singleElement()
        .satisfies(f -> {
          assertThat(f.kind()).isEqualTo(FindingKind.LEAK);
          assertThat(f.message()).contains("that Eip is gone");
        });
    assertThat(EipChecks.check(List.of(shown(WEB, null, null, null)), List.of(ec2("eipalloc-2", WEB, null, null))))
        .isEmpty();
    assertThat(EipChecks.check(List.of(shown(WEB, "eipalloc-3", null, null)), List.of(
        ec2("eipalloc-2", WEB, null, null), ec2("eipalloc-3", WEB, null, null)))).singleElement()
        .satisfies(f -> assertThat(f.message()).contains("that Eip shows another address"));
  }

  @Test
  void anAssociationOtherThanTheStatusSaysIsDrift() {
    assertThat(EipChecks.check(List.of(shown(WEB, "eipalloc-1", "eni-1", "10.0.0.5")),
        List.of(ec2("eipalloc-1", WEB, "eni-2", "10.0.0.6")))).singleElement().satisfies(f -> {
          assertThat(f.kind()).isEqualTo(FindingKind.DRIFT);
          assertThat(f.message()).contains("says it is associated with eni-1 10.0.0.5 but EC2 has it associated with"
              + " eni-2 10.0.0.6");
        });
  }

  @Test
  void anUntaggedAllocationNoEipNamesIsNotThisClustersBusiness() {
    assertThat(EipChecks.check(List.of(), List.of(ec2("eipalloc-9", null, "eni-9", "10.0.0.9")))).isEmpty();
  }

  /** Random worlds: the findings never depend on order, and a duplicate is reported exactly when two Eips share. */
  @Test
  void propertiesOverRandomWorlds() {
    qt().withExamples(500).forAll(longs().all()).checkAssert(seed -> {
      Random rnd = new Random(seed);
      List<EipShown> shown = new ArrayList<>();
      List<ElasticAddress> addresses = new ArrayList<>();
      for (int i = 0; i < 1 + rnd.nextInt(6); i++) {
        String alloc = rnd.nextInt(4) == 0 ? null : "eipalloc-" + rnd.nextInt(5);
        shown.add(new EipShown("eip/Eip/ns/e" + i, alloc, rnd.nextBoolean() ? "eni-1" : null, null, "Eip e" + i));
      }
      for (int a = 0; a < 5; a++) {
        if (rnd.nextBoolean()) {
          addresses.add(new ElasticAddress("eipalloc-" + a, "198.51.100." + a,
              rnd.nextInt(3) == 0 ? null : "eip/Eip/ns/e" + rnd.nextInt(6), rnd.nextBoolean() ? "eni-1" : null, null));
        }
      }
      List<Finding> findings = EipChecks.check(shown, addresses);
      List<EipShown> s2 = new ArrayList<>(shown);
      List<ElasticAddress> a2 = new ArrayList<>(addresses);
      Collections.shuffle(s2, new Random(seed + 1));
      Collections.shuffle(a2, new Random(seed + 2));
      assertThat(EipChecks.check(s2, a2)).as("seed %d", seed).isEqualTo(findings);
      Set<String> expected = new HashSet<>();
      for (EipShown x : shown) {
        if (x.allocationId() != null && shown.stream().anyMatch(y -> y != x && x.allocationId().equals(y.allocationId()))) {
          expected.add(x.allocationId());
        }
      }
      Set<String> reported = new HashSet<>();
      findings.stream().filter(f -> f.kind() == FindingKind.DUPLICATE).forEach(f -> reported.add(f.resource().value()));
      assertThat(reported).as("seed %d", seed).isEqualTo(expected);
      for (Finding f : findings) {
        if (f.kind() == FindingKind.LEAK) {
          assertThat(shown).as("seed %d: a leak is shown by no Eip", seed)
              .noneMatch(e -> f.resource().value().equals(e.allocationId()));
        }
      }
    });
  }
}
