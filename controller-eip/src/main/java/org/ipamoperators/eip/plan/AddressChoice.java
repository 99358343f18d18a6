package org.ipamoperators.eip.plan;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.eip.api.EipNames;

/**
 * Which of the addresses tagged with an Eip's UID it keeps. None: one must be allocated (or adopted). One: that
 * one. Several (an allocation repeated after a crash before EC2's listing showed the first, or a restore): the one
 * the status names, else an associated one, else the oldest: allocated first by its {@code allocated_at} tag (one
 * without it, the old operator's, counts as older than any of ours), then the lowest allocation id (allocation ids
 * are random, so only a tie-break); the others are released. Pure.
 */
public record AddressChoice(Optional<ElasticIp> keep, List<ElasticIp> release) {

  public boolean needsAddress() {
    return keep.isEmpty();
  }

  public static AddressChoice of(List<ElasticIp> tagged, String statusAllocationId) {
    if (tagged.isEmpty()) {
      return new AddressChoice(Optional.empty(), List.of());
    }
    Comparator<ElasticIp> preference = Comparator
        .comparing((ElasticIp a) -> !a.allocationId().equals(statusAllocationId))
        .thenComparing(a -> !a.associated())
        .thenComparing(AddressChoice::allocatedAt)
        .thenComparing(ElasticIp::allocationId);
    List<ElasticIp> sorted = new ArrayList<>(tagged);
    sorted.sort(preference);
    return new AddressChoice(Optional.of(sorted.get(0)), List.copyOf(sorted.subList(1, sorted.size())));
  }

  /** The allocation time of the tag; none or a malformed one is the oldest possible. */
  static Instant allocatedAt(ElasticIp a) {
    String at = a.tag(EipNames.TAG_ALLOCATED_AT);
    if (at != null) {
      try {
        return Instant.parse(at);
      } catch (DateTimeParseException e) {
        // unknown: oldest
      }
    }
    return Instant.MIN;
  }
}
