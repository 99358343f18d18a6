package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.eip.api.EipNames;
import org.junit.jupiter.api.Test;

class AddressChoiceTest {
  private static ElasticIp free(String id) {
    return new ElasticIp(id, "198.51.100." + id.length(), null, null, null, null, null, Map.of());
  }

  private static ElasticIp associated(String id) {
    return new ElasticIp(id, "198.51.100.9", "eipassoc-" + id, "eni-1", "10.0.0.5", null, null, Map.of());
  }

  @Test
  void noneMeansAllocateOneMeansKeep() {
    assertThat(AddressChoice.of(List.of(), null).needsAddress()).isTrue();
    AddressChoice one = AddressChoice.of(List.of(free("eipalloc-1")), null);
    assertThat(one.keep()).contains(free("eipalloc-1"));
    assertThat(one.release()).isEmpty();
  }

  @Test
  void duplicatesKeepTheStatusOneThenTheAssociatedThenTheLowestId() {
    assertThat(AddressChoice.of(List.of(free("eipalloc-2"), free("eipalloc-1"), associated("eipalloc-3")),
        "eipalloc-2").keep().orElseThrow().allocationId()).isEqualTo("eipalloc-2");
    AddressChoice c = AddressChoice.of(List.of(free("eipalloc-2"), free("eipalloc-1"), associated("eipalloc-3")),
        null);
    assertThat(c.keep().orElseThrow().allocationId()).isEqualTo("eipalloc-3");
    assertThat(c.release()).extracting(ElasticIp::allocationId).containsExactly("eipalloc-1", "eipalloc-2");
    assertThat(AddressChoice.of(List.of(free("eipalloc-2"), free("eipalloc-1")), "eipalloc-gone").keep()
        .orElseThrow().allocationId()).isEqualTo("eipalloc-1");
  }

  private static ElasticIp allocatedAt(String id, String at) {
    return new ElasticIp(id, "198.51.100.7", null, null, null, null, null,
        at == null ? Map.of() : Map.of(EipNames.TAG_ALLOCATED_AT, at));
  }

  /** Allocation ids are random: the oldest is the one allocated first (its tag; untagged ones predate ours). */
  @Test
  void amongUnassociatedDuplicatesTheOldestByItsAllocationTimeIsKeptNotTheLowestId() {
    AddressChoice c = AddressChoice.of(List.of(allocatedAt("eipalloc-0aaa", "2026-11-27T10:00:05Z"),
        allocatedAt("eipalloc-0fff", "2026-11-27T10:00:01Z")), null);
    assertThat(c.keep().orElseThrow().allocationId()).isEqualTo("eipalloc-0fff");
    assertThat(c.release()).extracting(ElasticIp::allocationId).containsExactly("eipalloc-0aaa");
    // One the old operator allocated (no time tag) is older than any of ours.
    assertThat(AddressChoice.of(List.of(allocatedAt("eipalloc-0aaa", "2026-11-27T10:00:05Z"),
        allocatedAt("eipalloc-0fff", null)), null).keep().orElseThrow().allocationId()).isEqualTo("eipalloc-0fff");
    // A malformed time counts as unknown (oldest), never as an error.
    assertThat(AddressChoice.of(List.of(allocatedAt("eipalloc-0aaa", "2026-11-27T10:00:05Z"),
        allocatedAt("eipalloc-0fff", "yesterday")), null).keep().orElseThrow().allocationId())
        .isEqualTo("eipalloc-0fff");
  }
}
