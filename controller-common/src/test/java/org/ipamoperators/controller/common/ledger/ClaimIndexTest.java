package org.ipamoperators.controller.common.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.ipamoperators.core.address.Ip;
import org.junit.jupiter.api.Test;

class ClaimIndexTest {
  private static final ClaimOwner A = new ClaimOwner("vip", "Service", "ns", "a", "uid-a");
  private static final ClaimOwner B = new ClaimOwner("vip", "Service", "ns", "b", "uid-b");

  private static IPClaim claim(String ip, ClaimOwner owner, String uid, long rv) {
    IPClaim c = IPClaim.of(ClaimNames.of(Ip.parse(ip)), new IPClaimSpec(ip, "ipgroup/g", owner), Map.of());
    ObjectMeta m = c.getMetadata();
    m.setUid(uid);
    m.setResourceVersion(Long.toString(rv));
    return c;
  }

  @Test
  void ownCreateStaysVisibleWhateverLateEventsOfAnOlderClaimSay() {
    ClaimIndex index = new ClaimIndex();
    IPClaim old = claim("198.18.0.1", B, "u0", 5);
    IPClaim mine = claim("198.18.0.1", A, "u1", 10);
    index.created(mine);
    // The informer lags: it now delivers the old claim's add, update and delete.
    index.seen(old);
    index.seen(claim("198.18.0.1", B, "u0", 6));
    index.deleted(old);
    assertThat(index.get(Ip.parse("198.18.0.1"))).map(ClaimIndex.Entry::owner).contains(A);
    assertThat(index.keys(ClaimIndex.ownerKey(A))).containsExactly(Ip.parse("198.18.0.1"));
    assertThat(index.keys(ClaimIndex.ownerKey(B))).isEmpty();
    // The informer catches up with our claim, then its delete: gone.
    index.seen(mine);
    index.deleted(claim("198.18.0.1", A, "u1", 12));
    assertThat(index.contains(Ip.parse("198.18.0.1"))).isFalse();
    assertThat(index.keys(ClaimIndex.ownerKey(A))).isEmpty();
  }

  @Test
  void anAnswerOfTheVersionTheInformerShowedKeepsTheInformersCopy() {
    ClaimIndex index = new ClaimIndex();
    IPClaim informers = claim("198.18.0.3", A, "u1", 10);
    index.seen(informers);
    index.created(claim("198.18.0.3", A, "u1", 10)); // the create's answer, read after the watch event
    assertThat(index.get(Ip.parse("198.18.0.3"))).map(ClaimIndex.Entry::claim).containsSame(informers);
    IPClaim newer = claim("198.18.0.3", A, "u1", 11);
    index.created(newer);
    assertThat(index.get(Ip.parse("198.18.0.3"))).map(ClaimIndex.Entry::claim).containsSame(newer);
    IPClaim other = claim("198.18.0.3", B, "u2", 11); // same version number, another claim (uid)
    index.created(other);
    assertThat(index.get(Ip.parse("198.18.0.3"))).map(ClaimIndex.Entry::owner).contains(B);
  }

  @Test
  void aDeleteOfOneClaimNeverRemovesAnotherOnTheSameAddress() {
    ClaimIndex index = new ClaimIndex();
    index.seen(claim("198.18.0.2", A, "u1", 10));
    index.deleted(claim("198.18.0.2", B, "u-other", 11));
    assertThat(index.contains(Ip.parse("198.18.0.2"))).isTrue();
  }

  @Test
  void reservationsAreExclusiveAndOnlyTheirOwnerDropsThem() {
    ClaimIndex index = new ClaimIndex();
    Ip ip = Ip.parse("198.18.0.3");
    ClaimIndex.Reservation r1 = new ClaimIndex.Reservation(A, "ipgroup/g");
    ClaimIndex.Reservation r2 = new ClaimIndex.Reservation(B, "ipgroup/g");
    assertThat(index.reserve(ip, r1)).isTrue();
    assertThat(index.reserve(ip, r2)).isFalse();
    index.unreserve(ip, r2);
    assertThat(index.get(ip)).map(ClaimIndex.Entry::owner).contains(A);
    // A claim seen replaces the reservation; the late unreserve leaves the claim alone.
    index.seen(claim("198.18.0.3", B, "u2", 3));
    index.unreserve(ip, r1);
    assertThat(index.get(ip)).map(ClaimIndex.Entry::owner).contains(B);
  }

  @Test
  void claimsWithUnparsableAddressesAreSkipped() {
    ClaimIndex index = new ClaimIndex();
    IPClaim bad = IPClaim.of("x", new IPClaimSpec("not-an-ip", "p", A), Map.of());
    index.seen(bad);
    index.deleted(bad);
    assertThat(index.size()).isZero();
  }

  /**
   * The catch-up race of issue 12 in the small: one thread's claim must be visible from the moment
   * its create returned, while other threads feed informer events (adds of that very claim, and
   * adds and deletes of other claims) at the same time. The old design (a cache copy plus a map of
   * recent claims that any thread removed from once its copy showed the claim) lost such claims.
   */
  @Test
  void aCreatedClaimIsNeverInvisibleWhileOthersFeedEventsConcurrently() throws Exception {
    ClaimIndex index = new ClaimIndex();
    int n = 2000;
    ExecutorService pool = Executors.newFixedThreadPool(4);
    AtomicInteger invisible = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(n);
    for (int i = 0; i < n; i++) {
      String ip = "198.18." + (i / 250) + "." + (i % 250 + 1);
      ClaimOwner owner = new ClaimOwner("vip", "Service", "ns", "s" + i, "uid" + i);
      IPClaim c = claim(ip, owner, "u" + i, 100 + i);
      pool.submit(() -> {
        try {
          index.created(c);
          // the informer delivers it (a stale copy of it first) while the owner looks at it
          index.seen(claim(ip, owner, "u" + ip, 1));
          index.seen(c);
          if (!index.contains(Ip.parse(ip)) || !index.keys(ClaimIndex.ownerKey(owner)).contains(Ip.parse(ip))) {
            invisible.incrementAndGet();
          }
        } finally {
          done.countDown();
        }
      });
    }
    assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
    pool.shutdown();
    assertThat(invisible).hasValue(0);
    assertThat(index.size()).isEqualTo(n);
    assertThat(index.claims()).hasSize(n);
  }

  /**
   * A new version of a claim (every join or leave of a shared address makes one) never hides the address from its
   * owner's key, not even for an instant: a planner reading the key then would take the owner to hold nothing and
   * claim a second address for it.
   */
  @Test
  void anUpdatedClaimStaysUnderItsKeysWhileItIsReplaced() throws Exception {
    ClaimIndex index = new ClaimIndex(c -> List.of("member:" + c.getMetadata().getResourceVersion().length()));
    Ip ip = Ip.parse("198.18.0.9");
    index.seen(claim("198.18.0.9", A, "u1", 1));
    AtomicInteger missed = new AtomicInteger();
    java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
    Thread reader = new Thread(() -> {
      while (!done.get()) {
        if (!index.keys(ClaimIndex.ownerKey(A)).contains(ip)) {
          missed.incrementAndGet();
        }
      }
    });
    reader.start();
    for (long rv = 2; rv < 200_000; rv++) {
      index.seen(claim("198.18.0.9", A, "u1", rv));
    }
    done.set(true);
    reader.join();
    assertThat(missed).hasValue(0);
    // A key the new version no longer has is dropped once it is replaced.
    assertThat(index.keys("member:6")).containsExactly(ip);
    assertThat(index.keys("member:5")).isEmpty();
  }
}
