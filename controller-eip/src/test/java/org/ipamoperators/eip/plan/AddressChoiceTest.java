package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
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
}
