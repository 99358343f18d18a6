package org.ipamoperators.cli.audit;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPBlockEntry;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.vip.api.VipAnnotations;
import org.junit.jupiter.api.Test;

class OwnersTest {
  private static final Owners OWNERS = Owners.of(
      List.of(new NamespaceBuilder().withNewMetadata().withName("team-a").endMetadata().build()),
      List.of(new ServiceBuilder().withNewMetadata().withNamespace("team-a").withName("shop").endMetadata().build()),
      List.of(named(new KeepalivedGroup(), "team-b", "edge")), List.of(named(new Eip(), "team-c", "nat")));

  private static <T extends io.fabric8.kubernetes.api.model.HasMetadata> T named(T o, String ns, String name) {
    o.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withNamespace(ns).withName(name).build());
    return o;
  }

  private static ClaimOwner owner(String kind, String namespace, String name) {
    return new ClaimOwner("c", kind, namespace, name, null);
  }

  private static IPClaim sharedClaim(String members) {
    IPClaim c = new IPClaim();
    c.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("ip-1")
        .withAnnotations(members == null ? null : Map.of(VipAnnotations.SHARING_MEMBERS, members)).build());
    return c;
  }

  @Test
  void anOwnerExistsWhileTheObjectOfItsKindAndNameWasRead() {
    IPBlock block = new IPBlock();
    assertThat(OWNERS.exists(owner("Namespace", null, "team-a"), block)).isTrue();
    assertThat(OWNERS.exists(owner("Namespace", null, "team-x"), block)).isFalse();
    assertThat(OWNERS.exists(owner("Service", "team-a", "shop"), block)).isTrue();
    assertThat(OWNERS.exists(owner("Service", "team-b", "shop"), block)).isFalse();
    assertThat(OWNERS.exists(owner("KeepalivedGroup", "team-b", "edge"), block)).isTrue();
    assertThat(OWNERS.exists(owner("KeepalivedGroup", "team-a", "edge"), block)).isFalse();
    assertThat(OWNERS.eipExists(owner("Eip", "team-c", "nat"))).isTrue();
    assertThat(OWNERS.eipExists(owner("Eip", "team-c", "other"))).isFalse();
  }

  @Test
  void unknownKindsAreNeverCalledGone() {
    assertThat(OWNERS.exists(owner("Eip", "team-c", "gone"), new IPBlock())).isTrue();
    assertThat(OWNERS.exists(owner("Widget", "x", "y"), new IPBlock())).isTrue();
  }

  @Test
  void aSharingKeyLivesWhileAServiceListedOnItsClaimExists() {
    ClaimOwner key = owner("SharingKey", "team-a", "key");
    assertThat(OWNERS.exists(key, sharedClaim("[{\"service\":\"team-a/shop\"}]"))).isTrue();
    assertThat(OWNERS.exists(key, sharedClaim("[{\"service\":\"team-a/gone\"}]"))).isFalse();
    assertThat(OWNERS.exists(key, sharedClaim("not json"))).isFalse();
    assertThat(OWNERS.exists(key, sharedClaim(null))).isTrue(); // no annotations at all: not judged
    assertThat(OWNERS.exists(key, new IPBlock())).isTrue(); // a block entry does not list members
  }

  @Test
  void aBlockEntryCountsFromItsOwnTimeElseFromTheBlocks() {
    Instant block = Instant.parse("2026-01-01T00:00:00Z");
    ClaimOwner o = owner("Namespace", null, "team-a");
    assertThat(ClusterFacts.entrySince(new IPBlockEntry("p", o, null, "2026-02-01T00:00:00Z"), block))
        .isEqualTo(Instant.parse("2026-02-01T00:00:00Z"));
    assertThat(ClusterFacts.entrySince(new IPBlockEntry("p", o, null, null), block)).isEqualTo(block);
    assertThat(ClusterFacts.entrySince(new IPBlockEntry("p", o, null, "yesterday"), block)).isEqualTo(block);
  }
}
