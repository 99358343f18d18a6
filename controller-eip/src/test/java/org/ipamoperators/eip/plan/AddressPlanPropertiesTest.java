package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.eip.api.EipNames;
import org.junit.jupiter.api.Test;

/**
 * {@link AddressPlan} over random observations: the addresses EC2 shows tagged with the Eip's UID (none, one or
 * duplicates, some associated, some with an allocation time) and the one the status names, found by its allocation
 * id with no UID, this Eip's or another Eip's. QuickTheories draws the seed.
 */
class AddressPlanPropertiesTest {
  private static final String UID = "uid-self";
  private static final Map<String, String> OURS = Map.of(EipNames.TAG_UID, UID, EipNames.TAG_NAME, "e1");

  /** One observation and what the planner made of it. */
  private record Case(List<ElasticIp> tagged, String statusId, Optional<ElasticIp> recorded, boolean deleting,
      AddressPlan plan) {}

  private static Case draw(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    List<ElasticIp> tagged = new ArrayList<>();
    int n = r.nextInt(4);
    for (int i = 0; i < n; i++) {
      tagged.add(address(r, "eipalloc-t" + i, UID));
    }
    String statusId = switch (r.nextInt(4)) {
      case 0 -> null;
      case 1 -> n > 0 ? tagged.get(r.nextInt(n)).allocationId() : "eipalloc-s";
      default -> "eipalloc-s";
    };
    Optional<ElasticIp> recorded = Optional.empty();
    if (AddressPlan.lookUpRecorded(tagged, statusId) && r.nextBoolean()) {
      String owner = switch (r.nextInt(3)) {
        case 0 -> null;
        case 1 -> UID;
        default -> "uid-other";
      };
      recorded = Optional.of(address(r, statusId, owner));
    }
    boolean deleting = r.nextInt(4) == 0;
    return new Case(tagged, statusId, recorded, deleting,
        AddressPlan.of(UID, tagged, statusId, recorded, deleting ? null : OURS));
  }

  private static ElasticIp address(SplittableRandom r, String id, String uid) {
    Map<String, String> tags = new HashMap<>();
    if (uid != null) {
      tags.put(EipNames.TAG_UID, uid);
    }
    if (r.nextBoolean()) {
      tags.put(EipNames.TAG_ALLOCATED_AT, Instant.parse("2026-11-27T10:00:00Z").plusSeconds(r.nextInt(60)).toString());
    }
    boolean associated = r.nextBoolean();
    return new ElasticIp(id, "198.51.100." + (1 + r.nextInt(250)), associated ? "eipassoc-" + id : null,
        associated ? "eni-1" : null, associated ? "10.0.0." + (1 + r.nextInt(250)) : null, null, null, tags);
  }

  private static Set<String> ids(List<ElasticIp> addresses) {
    Set<String> ids = new HashSet<>();
    addresses.forEach(a -> ids.add(a.allocationId()));
    return ids;
  }

  @Test
  void neverKeepsRetagsOrReleasesAnAddressHeldByAnotherEip() {
    qt().withExamples(2000).forAll(longs().all()).checkAssert(seed -> {
      Case c = draw(seed);
      List<ElasticIp> touched = new ArrayList<>(c.plan().all());
      c.plan().retag().ifPresent(touched::add);
      assertThat(touched).as("seed %d", seed).allSatisfy(a -> assertThat(a.tag(EipNames.TAG_UID))
          .isIn(null, UID));
    });
  }

  @Test
  void keepsExactlyOneOfItsOwnAndReleasesTheRest() {
    qt().withExamples(2000).forAll(longs().all()).checkAssert(seed -> {
      Case c = draw(seed);
      Set<String> own = ids(c.tagged());
      c.recorded().filter(a -> !"uid-other".equals(a.tag(EipNames.TAG_UID)))
          .ifPresent(a -> own.add(a.allocationId()));
      AddressPlan p = c.plan();
      assertThat(ids(p.all())).as("seed %d", seed).isEqualTo(own);
      assertThat(p.all()).as("seed %d", seed).hasSize(own.size());
      assertThat(p.needsAddress()).as("seed %d", seed).isEqualTo(own.isEmpty());
      p.keep().ifPresent(k -> assertThat(ids(p.release())).as("seed %d", seed).doesNotContain(k.allocationId()));
      if (c.statusId() != null && own.contains(c.statusId())) {
        assertThat(p.keep().orElseThrow().allocationId()).as("seed %d", seed).isEqualTo(c.statusId());
      }
    });
  }

  @Test
  void retagsOnlyTheRecordedAddressTheTagsMissedAndNeverWhileDeleting() {
    qt().withExamples(2000).forAll(longs().all()).checkAssert(seed -> {
      Case c = draw(seed);
      AddressPlan p = c.plan();
      if (c.deleting()) {
        assertThat(p.retag()).as("seed %d", seed).isEmpty();
        return;
      }
      boolean missed = c.recorded().filter(a -> !"uid-other".equals(a.tag(EipNames.TAG_UID))).isPresent();
      assertThat(p.retag().isPresent()).as("seed %d", seed).isEqualTo(missed);
      p.retag().ifPresent(a -> {
        assertThat(a.allocationId()).isEqualTo(c.statusId());
        assertThat(ids(c.tagged())).doesNotContain(a.allocationId());
        assertThat(p.retagWith()).isEqualTo(OURS);
        // The kept or released copy carries the tags it is given.
        assertThat(p.all()).filteredOn(x -> x.allocationId().equals(a.allocationId()))
            .singleElement().satisfies(x -> assertThat(x.tags()).containsAllEntriesOf(OURS));
      });
    });
  }

  @Test
  void adoptsOnlyFreeAddressesOfNoEip() {
    qt().withExamples(500).forAll(longs().all()).checkAssert(seed -> {
      SplittableRandom r = new SplittableRandom(seed);
      List<ElasticIp> candidates = new ArrayList<>();
      for (int i = r.nextInt(6); i > 0; i--) {
        candidates.add(address(r, "eipalloc-a" + i, r.nextBoolean() ? null : "uid-" + r.nextInt(3)));
      }
      List<ElasticIp> adoptable = AddressPlan.adoptable(candidates);
      assertThat(adoptable).as("seed %d", seed)
          .allSatisfy(a -> assertThat(a.tag(EipNames.TAG_UID) == null && !a.associated()).isTrue());
      assertThat(adoptable).as("seed %d", seed).containsExactlyElementsOf(candidates.stream()
          .filter(a -> a.tag(EipNames.TAG_UID) == null && !a.associated()).toList());
    });
  }

  @Test
  void aRecordedAddressOfAnotherEipIsLeftAloneAndOneIsAllocated() {
    ElasticIp other = new ElasticIp("eipalloc-x", "198.51.100.4", null, null, null, null, null,
        Map.of(EipNames.TAG_UID, "uid-other"));
    AddressPlan p = AddressPlan.of(UID, List.of(), "eipalloc-x", Optional.of(other), OURS);
    assertThat(p.needsAddress()).isTrue();
    assertThat(p.retag()).isEmpty();
    assertThat(p.release()).isEmpty();
  }

  @Test
  void newAddressesCarryTheirAllocationTimeToTheSecond() {
    assertThat(AddressPlan.allocationTags(OURS, Instant.parse("2026-11-27T10:00:05.734Z")))
        .containsAllEntriesOf(OURS).containsEntry(EipNames.TAG_ALLOCATED_AT, "2026-11-27T10:00:05Z");
  }
}
