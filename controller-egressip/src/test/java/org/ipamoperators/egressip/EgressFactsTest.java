package org.ipamoperators.egressip;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPBlockEntry;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.egressip.api.EgressIPAM;
import org.ipamoperators.egressip.api.EgressIPAMSpec;
import org.ipamoperators.egressip.api.CIDRAssignment;
import org.ipamoperators.egressip.plan.ClaimFact;
import org.junit.jupiter.api.Test;

/** Block entries are read as claims, the same facts an IPClaim of the same owner gives. */
class EgressFactsTest {
  private static final ClaimOwner PAYMENTS = new ClaimOwner("egressip", "Namespace", null, "payments", null);

  @Test
  void aBlockEntryIsTheSameFactAsAnIPClaimOfTheSameOwner() {
    IPBlock block = IPBlock.of("192.0.2.0-26", "192.0.2.0/26",
        Map.of("192.0.2.5", new IPBlockEntry("egressipam/bm", PAYMENTS, "allocated", "2026-11-26T07:00:00Z")));
    IPClaim claim = IPClaim.of("192.0.2.5", new IPClaimSpec("192.0.2.5", "egressipam/bm", PAYMENTS), Map.of());
    claim.getMetadata().setCreationTimestamp("2026-11-26T07:00:00Z");
    assertThat(EgressFacts.claims(block)).containsExactly(EgressFacts.claim(claim))
        .containsExactly(new ClaimFact(Ip.parse("192.0.2.5"), "egressipam/bm", "payments", PAYMENTS.describe(), false,
            Instant.parse("2026-11-26T07:00:00Z")));
  }

  @Test
  void entriesWithoutAddressOrOwnerAreSkippedAndAnUnreadableTimeIsNoTime() {
    Map<String, IPBlockEntry> entries = new LinkedHashMap<>();
    entries.put("not-an-address", new IPBlockEntry("egressipam/bm", PAYMENTS, null, null));
    entries.put("192.0.2.6", new IPBlockEntry("egressipam/bm", null, null, null));
    entries.put("192.0.2.7", new IPBlockEntry("vip/pool", new ClaimOwner("vip", "Service", "web", "lb", null), null,
        "yesterday"));
    IPBlock block = IPBlock.of("192.0.2.0-26", "192.0.2.0/26", entries);
    List<ClaimFact> facts = EgressFacts.claims(block);
    assertThat(facts).extracting(ClaimFact::address).containsExactly(Ip.parse("192.0.2.7"));
    assertThat(facts.get(0).created()).isNull();
    assertThat(facts.get(0).pool()).isEqualTo("vip/pool");
  }

  @Test
  void inputsReadBlocksBesideClaims() {
    EgressIPAM ipam = new EgressIPAM();
    ipam.setMetadata(new ObjectMeta());
    ipam.getMetadata().setName("bm");
    ipam.setSpec(new EgressIPAMSpec(List.of(new CIDRAssignment("192.0.2.0/24", "true", null)), "egressGateway",
        null, null, null, null));
    IPBlock block = Serialization.unmarshal(Serialization.asJson(IPBlock.of("192.0.2.0-26", "192.0.2.0/26",
        Map.of("192.0.2.9", new IPBlockEntry("egressipam/bm", PAYMENTS, "manual", null)))), IPBlock.class);
    IPClaim old = IPClaim.of("192.0.2.10", new IPClaimSpec("192.0.2.10", "egressipam/bm", PAYMENTS), Map.of());
    var inputs = EgressFacts.inputs(ipam, List.of(), List.of(), List.of(old), List.of(block), List.of());
    assertThat(inputs.claims()).extracting(ClaimFact::address)
        .containsExactlyInAnyOrder(Ip.parse("192.0.2.9"), Ip.parse("192.0.2.10"));
    assertThat(EgressFacts.inputs(ipam, List.of(), List.of(), List.of(old), List.of()).claims()).hasSize(1);
  }
}
