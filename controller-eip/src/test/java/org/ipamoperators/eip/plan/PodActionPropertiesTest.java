package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.junit.jupiter.api.Test;

/**
 * {@link PodAction} over random Eips selecting one pod (manual and autocreated, of random ages) and random pods and
 * addresses: one Eip at most may hold the pod, and an address is associated only with a pod that may hold it.
 */
class PodActionPropertiesTest {
  private static final String POD = "db-0";

  private static List<PodClaimant> claimants(SplittableRandom r) {
    List<PodClaimant> all = new ArrayList<>();
    for (int i = 1 + r.nextInt(4); i > 0; i--) {
      all.add(new PodClaimant("e" + i, r.nextBoolean(),
          r.nextInt(5) == 0 ? null : Instant.parse("2026-11-27T10:00:00Z").plusSeconds(r.nextInt(3))));
    }
    return all;
  }

  private static Optional<PodView> pod(SplittableRandom r) {
    if (r.nextInt(6) == 0) {
      return Optional.empty();
    }
    return Optional.of(new PodView(POD, r.nextInt(6) != 0, r.nextInt(6) == 0, r.nextInt(6) == 0 ? null : "n1",
        r.nextInt(6) == 0 ? null : "10.0.0." + (5 + r.nextInt(2))));
  }

  private static ElasticIp address(SplittableRandom r) {
    boolean associated = r.nextBoolean();
    return new ElasticIp("eipalloc-1", "198.51.100.7", associated ? "eipassoc-1" : null,
        associated ? "eni-1" : null, associated ? "10.0.0." + (5 + r.nextInt(2)) : null, null, null, Map.of());
  }

  private static List<PodClaimant> without(List<PodClaimant> all, PodClaimant self) {
    return all.stream().filter(c -> c != self).toList();
  }

  @Test
  void atMostOneEipHoldsThePodAndItIsTheManualOldestOne() {
    qt().withExamples(2000).forAll(longs().all()).checkAssert(seed -> {
      SplittableRandom r = new SplittableRandom(seed);
      List<PodClaimant> all = claimants(r);
      Optional<PodView> pod = pod(r);
      ElasticIp address = address(r);
      List<String> holders = new ArrayList<>();
      for (PodClaimant self : all) {
        PodAction a = PodAction.of(self, without(all, self), POD, pod, address);
        if (!(a instanceof PodAction.Conflict)) {
          holders.add(self.name());
        } else {
          assertThat(((PodAction.Conflict) a).winner()).as("seed %d", seed)
              .isEqualTo(PodClaimant.winner(all).orElseThrow().name());
        }
      }
      assertThat(holders).as("seed %d", seed).containsExactly(PodClaimant.winner(all).orElseThrow().name());
    });
  }

  @Test
  void associatesOnlyWithAManagedScheduledLivePodWithAnIp() {
    qt().withExamples(2000).forAll(longs().all()).checkAssert(seed -> {
      SplittableRandom r = new SplittableRandom(seed);
      PodClaimant self = new PodClaimant("e1", false, null);
      Optional<PodView> pod = pod(r);
      ElasticIp address = address(r);
      PodAction a = PodAction.of(self, List.of(), POD, pod, address);
      boolean eligible = pod.filter(p -> p.managed() && !p.terminating() && p.nodeName() != null
          && p.podIp() != null).isPresent();
      assertThat(a instanceof PodAction.Detach).as("seed %d", seed).isEqualTo(!eligible);
      if (a instanceof PodAction.Keep k) {
        assertThat(address.associatedTo(null, k.podIp())).as("seed %d", seed).isTrue();
        assertThat(k.podIp()).isEqualTo(pod.orElseThrow().podIp());
      }
      if (a instanceof PodAction.Associate as) {
        assertThat(as.podIp()).as("seed %d", seed).isEqualTo(pod.orElseThrow().podIp());
        assertThat(address.associatedTo(null, as.podIp())).as("seed %d", seed).isFalse();
        assertThat(as.moving()).as("seed %d", seed).isEqualTo(address.associated());
      }
    });
  }

  @Test
  void aManualEipWinsThePodFromItsAutocreatedOne() {
    PodClaimant manual = new PodClaimant("web", false, Instant.parse("2026-11-27T10:00:02Z"));
    PodClaimant auto = new PodClaimant(POD, true, Instant.parse("2026-11-27T10:00:01Z"));
    ElasticIp free = new ElasticIp("eipalloc-1", "198.51.100.7", null, null, null, null, null, Map.of());
    Optional<PodView> pod = Optional.of(new PodView(POD, true, false, "n1", "10.0.0.5"));
    assertThat(PodAction.of(auto, List.of(manual), POD, pod, free)).isEqualTo(new PodAction.Conflict("web",
        "Eip web also selects pod db-0 and wins (a manual Eip before an autocreated one, then the oldest): this"
            + " one holds nothing"));
    assertThat(PodAction.of(manual, List.of(auto), POD, pod, free))
        .isEqualTo(new PodAction.Associate("10.0.0.5", "n1", false));
  }
}
