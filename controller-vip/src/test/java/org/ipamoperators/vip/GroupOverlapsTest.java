package org.ipamoperators.vip;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.List;
import org.ipamoperators.vip.api.IPGroup;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.ipamoperators.vip.plan.GroupInfo;
import org.junit.jupiter.api.Test;

/** Which IPGroups the planner sees as refused, from the objects as the API shows them. */
class GroupOverlapsTest {
  private static IPGroup group(String name, String created, String segment, List<String> excluded) {
    IPGroup g = new IPGroup();
    ObjectMeta m = new ObjectMeta();
    m.setName(name);
    m.setCreationTimestamp(created);
    g.setMetadata(m);
    g.setSpec(new IPGroupSpec(segment, excluded, null, null, null, null, null, null));
    return g;
  }

  private static String refused(List<GroupInfo> groups, String name) {
    return groups.stream().filter(g -> g.name().equals(name)).findFirst().orElseThrow().refused();
  }

  @Test
  void theOlderGroupServesWhateverItsName() {
    List<GroupInfo> groups = VipFacts.groups(List.of(group("a", "2026-01-01T00:00:09Z", "192.0.2.0/28", null),
        group("z", "2026-01-01T00:00:01Z", "192.0.2.0/27", null)));
    assertThat(refused(groups, "z")).isNull();
    assertThat(refused(groups, "a")).isEqualTo("192.0.2.0/28 overlaps IPGroup 'z' (192.0.2.0/27)");
  }

  @Test
  void aGroupBeingDeletedOrInvalidBlocksNobody() {
    IPGroup deleting = group("old", "2026-01-01T00:00:00Z", "192.0.2.0/27", null);
    deleting.getMetadata().setDeletionTimestamp("2026-01-01T01:00:00Z");
    IPGroup invalid = group("bad", "2026-01-01T00:00:00Z", "192.0.2.0/26", List.of("198.51.100.1")); // excluded outside
    List<GroupInfo> groups = VipFacts.groups(List.of(deleting, invalid,
        group("young", "2026-01-01T00:00:05Z", "192.0.2.0/28", null)));
    assertThat(groups).extracting(GroupInfo::name).containsExactlyInAnyOrder("bad", "young");
    assertThat(refused(groups, "young")).isNull();
  }

  @Test
  void withoutACreationTimeAGroupCountsAsYoungest() {
    List<GroupInfo> groups = VipFacts.groups(List.of(group("a", null, "192.0.2.0/28", null),
        group("b", "2026-01-01T00:00:01Z", "192.0.2.0/27", null)));
    assertThat(refused(groups, "a")).contains("IPGroup 'b'");
    assertThat(refused(groups, "b")).isNull();
  }
}
