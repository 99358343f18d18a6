package org.ipamoperators.vip.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.junit.jupiter.api.Test;

/** A Service is its uid: a Service re-created under an old name does not hold the old one's claim. */
class ServiceOwnersTest {
  private static ClaimOwner svc(String name, String uid) {
    return new ClaimOwner("vip", "Service", "ns", name, uid);
  }

  @Test
  void aClaimBelongsToTheServiceOfItsUidOrToTheNameWhenNoUidWasRecorded() {
    assertThat(ServiceOwners.same(svc("a", "u2"), svc("a", "u2"))).isTrue();
    assertThat(ServiceOwners.same(svc("a", "u2"), svc("a", "u1"))).isFalse();
    assertThat(ServiceOwners.same(svc("a", "u2"), svc("a", null))).isTrue(); // older or adopted claims
    assertThat(ServiceOwners.same(svc("a", "u2"), svc("b", "u2"))).isFalse();
  }

  @Test
  void theNewServiceOfAnOldNameHoldsNothingOfTheOldOne() {
    Ip old = Ip.parse("192.0.2.5");
    ServiceRequest req = new ServiceRequest("ns", "a", null, null, null, null, List.of(IpFamily.IPV4), null);
    LedgerEntry oldClaim = new LedgerEntry(old, "ipgroup/p", svc("a", "u1"), List.of(), false);
    assertThat(ServiceHoldings.of(req, svc("a", "u2"), null, List.of(oldClaim)).heldUnder()).isEmpty();
    assertThat(ServiceHoldings.of(req, svc("a", "u1"), null, List.of(oldClaim)).heldUnder()).containsKey(old);
  }
}
