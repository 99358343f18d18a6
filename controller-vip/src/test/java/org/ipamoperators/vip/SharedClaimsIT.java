package org.ipamoperators.vip;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.BlockNames;
import org.ipamoperators.controller.common.ledger.ClaimIndex;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPBlockEntry;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.ipamoperators.vip.plan.ShareMember;
import org.junit.jupiter.api.Test;

/**
 * A shared address's claim is made by controller-vip itself (it carries the members), so it must do
 * what every claim does: carry the ledger's labels and check the address's IPBlock after the create.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml"})
class SharedClaimsIT {
  private static final String POOL = "ipgroup/default/shared";
  private static final ShareMember MEMBER = new ShareMember("default/web", null, List.of("TCP/80"), "");

  @Test
  void aSharedClaimBacksOffFromABlockEntryWrittenFirst(KubernetesClient client) {
    Ip ip = Ip.parse("198.51.100.141");
    // An egress block writer holds the address and has not checked the IPClaims yet.
    client.resources(IPBlock.class).resource(IPBlock.of(BlockNames.of(ip), BlockNames.cidr(ip), Map.of(ip.toString(),
        new IPBlockEntry("egressipam/e", new ClaimOwner("egressip", "Namespace", null, "payments", null), null, null))))
        .create();
    SharedClaims.Joined joined = new SharedClaims(client, new ClaimIndex()).join(ip, POOL, "key-a", MEMBER);

    assertThat(joined.outcome()).isEqualTo(SharedClaims.Outcome.HELD_BY_OTHER);
    assertThat(joined.detail()).contains("payments");
    assertThat(client.resources(IPClaim.class).withName(ClaimNames.of(ip)).get()).as("the claim was withdrawn").isNull();
  }

  @Test
  void aSharedClaimCarriesItsBlockLabel(KubernetesClient client) {
    Ip ip = Ip.parse("198.51.100.142");
    SharedClaims.Joined joined = new SharedClaims(client, new ClaimIndex()).join(ip, POOL, "key-b", MEMBER);

    assertThat(joined.outcome()).isEqualTo(SharedClaims.Outcome.CREATED);
    assertThat(client.resources(IPClaim.class).withName(ClaimNames.of(ip)).get().getMetadata().getLabels())
        .containsEntry(ClusterLedger.LABEL_BLOCK, "198.51.100.128-26")
        .containsEntry(SharedClaims.LABEL_KEY, "key-b");
  }
}
