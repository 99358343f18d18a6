package org.ipamoperators.eip.plan;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * An Eip selecting a pod. When several select one pod (a manual Eip and the pod's autocreated one, or two manual
 * ones) exactly one holds it: a manual Eip before an autocreated one, then the oldest, then by name. The others get
 * a {@code Conflict} condition naming the winner and hold nothing. Pure.
 */
public record PodClaimant(String name, boolean autocreated, Instant created) {

  private static final Comparator<PodClaimant> ORDER = Comparator.comparing(PodClaimant::autocreated)
      .thenComparing(c -> c.created() == null ? Instant.MAX : c.created())
      .thenComparing(PodClaimant::name);

  public static Optional<PodClaimant> winner(List<PodClaimant> claimants) {
    return claimants.stream().min(ORDER);
  }
}
