package org.ipamoperators.eip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.ipamoperators.cloud.aws.eip.ElasticIp;
import org.ipamoperators.eip.api.EipNames;
import org.ipamoperators.eip.api.EipSelector;
import org.junit.jupiter.api.Test;

class OrphanSweepTest {
  private static ElasticIp address(String id, String cluster, String namespace, String uid) {
    Map<String, String> tags = new HashMap<>();
    if (cluster != null) {
      tags.put(EipNames.TAG_CLUSTER, cluster);
    }
    if (namespace != null) {
      tags.put(EipNames.TAG_NAMESPACE, namespace);
    }
    if (uid != null) {
      tags.put(EipNames.TAG_UID, uid);
    }
    return new ElasticIp(id, "203.0.113.1", null, null, null, null, null, tags);
  }

  @Test
  void onlyOurClusterOurNamespaceAndAGoneUidAreReleased() {
    ElasticIp orphan = address("eipalloc-1", "prod", "web", "gone");
    List<ElasticIp> found = List.of(orphan, address("eipalloc-2", "prod", "web", "live"),
        address("eipalloc-3", "staging", "web", "gone"), address("eipalloc-4", null, null, null),
        address("eipalloc-5", "prod", "web", null), address("eipalloc-6", "prod", "other", "gone"));
    assertThat(OrphanSweep.orphans(found, "prod", "web", Set.of("live"))).containsExactly(orphan);
    assertThat(OrphanSweep.orphans(found, "prod", null, Set.of("live"))).extracting(ElasticIp::allocationId)
        .containsExactly("eipalloc-1", "eipalloc-6");
  }

  @Test
  void tagsAreTheOldOperatorsNames() {
    Map<String, String> pod = EipTags.of("prod", "web", "e1", "uid-1", EipSelector.pod("db-0"), Map.of("team", "x"));
    assertThat(pod).containsEntry("eip.materialize.cloud/eip_uid", "uid-1")
        .containsEntry("eip.materialize.cloud/eip_name", "e1")
        .containsEntry("eip.materialize.cloud/namespace", "web")
        .containsEntry("eip.materialize.cloud/cluster_name", "prod")
        .containsEntry("eip.materialize.cloud/pod_name", "db-0")
        .containsEntry("Name", "eip-operator:prod:web:e1").containsEntry("team", "x")
        .doesNotContainKey("eip.materialize.cloud/node_selector");
    Map<String, String> node = EipTags.of("prod", "web", "e1", "uid-1",
        EipSelector.node(Map.of("role", "egress", "a", "b\"c")), Map.of());
    assertThat(node).containsEntry("eip.materialize.cloud/node_selector", "{\"a\":\"b\\\"c\",\"role\":\"egress\"}");
  }
}
