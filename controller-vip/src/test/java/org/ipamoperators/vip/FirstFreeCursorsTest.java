package org.ipamoperators.vip;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.ipamoperators.controller.common.ledger.ClaimIndex;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.controller.common.ledger.IPClaimSpec;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.address.IpFamily;
import org.ipamoperators.vip.api.IPGroupSpec;
import org.ipamoperators.vip.plan.FirstFreeHints;
import org.ipamoperators.vip.plan.GroupInfo;
import org.junit.jupiter.api.Test;

/** A first-free hint holds only while the index has removed nothing since its search began. */
class FirstFreeCursorsTest {
  private static final GroupInfo G = new GroupInfo("g", new IPGroupSpec("192.0.2.0/24", null, null, null, null, null,
      null, null));

  private static IPClaim claim(String ip, String uid) {
    IPClaim c = IPClaim.of(ClaimNames.of(Ip.parse(ip)), new IPClaimSpec(ip, "ipgroup/g",
        new ClaimOwner("vip", "Service", "ns", "svc-" + ip, uid)), Map.of());
    c.getMetadata().setUid(uid);
    c.getMetadata().setResourceVersion("1");
    return c;
  }

  @Test
  void aHintLastsUntilTheIndexStopsRecordingAnAddress() {
    ClaimIndex index = VipFacts.newIndex();
    FirstFreeCursors cursors = new FirstFreeCursors(index);
    assertThat(cursors.search(G, IpFamily.IPV4).from()).isNull();
    FirstFreeHints.Search s = cursors.search(G, IpFamily.IPV4);
    index.seen(claim("192.0.2.0", "u0")); // added meanwhile: additions never spoil a hint
    s.found(Ip.parse("192.0.2.5"));
    assertThat(cursors.search(G, IpFamily.IPV4).from()).isEqualTo(Ip.parse("192.0.2.5"));
    assertThat(cursors.search(G, IpFamily.IPV6).from()).isNull();
    GroupInfo changed = new GroupInfo("g", new IPGroupSpec("192.0.2.0/24", List.of("192.0.2.1"), null, null, null,
        null, null, null));
    assertThat(cursors.search(changed, IpFamily.IPV4).from()).as("another spec is another pool").isNull();

    // A concurrent search that found less does not move the hint back.
    cursors.search(G, IpFamily.IPV4).found(Ip.parse("192.0.2.3"));
    assertThat(cursors.search(G, IpFamily.IPV4).from()).isEqualTo(Ip.parse("192.0.2.5"));

    // A search begun before a removal records nothing that outlives it.
    FirstFreeHints.Search before = cursors.search(G, IpFamily.IPV4);
    index.deleted(claim("192.0.2.0", "u0"));
    before.found(Ip.parse("192.0.2.9"));
    assertThat(cursors.search(G, IpFamily.IPV4).from()).isNull();

    // A dropped reservation is a removal too; one that became a claim is not.
    cursors.search(G, IpFamily.IPV4).found(Ip.parse("192.0.2.7"));
    ClaimIndex.Reservation r = new ClaimIndex.Reservation(new ClaimOwner("vip", "Service", "ns", "x", "ux"), "ipgroup/g");
    assertThat(index.reserve(Ip.parse("192.0.2.7"), r)).isTrue();
    index.seen(claim("192.0.2.7", "u7"));
    index.unreserve(Ip.parse("192.0.2.7"), r);
    assertThat(cursors.search(G, IpFamily.IPV4).from()).isEqualTo(Ip.parse("192.0.2.7"));
    assertThat(index.reserve(Ip.parse("192.0.2.8"), r)).isTrue();
    index.unreserve(Ip.parse("192.0.2.8"), r);
    assertThat(cursors.search(G, IpFamily.IPV4).from()).isNull();
    // Deleting a claim the index does not record (another uid) removes nothing.
    cursors.search(G, IpFamily.IPV4).found(Ip.parse("192.0.2.8"));
    index.deleted(claim("192.0.2.7", "other"));
    assertThat(cursors.search(G, IpFamily.IPV4).from()).isEqualTo(Ip.parse("192.0.2.8"));
  }
}
