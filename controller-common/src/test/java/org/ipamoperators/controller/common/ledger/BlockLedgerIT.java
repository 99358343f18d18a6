package org.ipamoperators.controller.common.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.testsupport.kube.ApiFaultProxy;
import org.ipamoperators.testsupport.kube.KubeApiServer;
import org.ipamoperators.testsupport.kube.KubeApiTest;
import org.junit.jupiter.api.Test;

/**
 * The block ledger on a real API server: one write per block for a group of addresses, the
 * compare-and-swap between two writers, and the two-sided check against IPClaim creators. Each
 * test uses blocks of its own (the server is shared); 10.26.0.0/16 is data only, never routed.
 */
@KubeApiTest(crds = {"META-INF/fabric8/ipclaims.ipam.ipamoperators.org-v1.yml",
    "META-INF/fabric8/ipblocks.ipam.ipamoperators.org-v1.yml"})
class BlockLedgerIT {
  private static final String POOL = "egressipam/blocks";

  private static ClaimOwner ns(String name) {
    return new ClaimOwner("egressip", "Namespace", null, name, null);
  }

  private static ClaimOwner service(String name) {
    return new ClaimOwner("vip", "Service", "default", name, null);
  }

  private static List<Ip> range(String first, int count) {
    List<Ip> out = new ArrayList<>();
    Ip ip = Ip.parse(first);
    for (int i = 0; i < count; i++) {
      out.add(ip);
      ip = ip.next();
    }
    return out;
  }

  @Test
  void aGroupOfAddressesCostsOneWritePerBlock(KubeApiServer server) {
    KubernetesClient client = server.newClient();
    AtomicInteger callbacks = new AtomicInteger();
    BlockLedger ledger = new BlockLedger(client, b -> callbacks.incrementAndGet());
    // 198.51.100.0 - .127: exactly two /26 blocks, 128 addresses of 64 owners (two each).
    List<BlockRequest> asked = new ArrayList<>();
    List<Ip> ips = range("198.51.100.0", 128);
    for (int i = 0; i < ips.size(); i++) {
      asked.add(new BlockRequest(ips.get(i), POOL, ns("group-" + (i / 2)), "allocated"));
    }
    double before = writes(client, "ipblocks");
    Map<Ip, BlockClaim> got = ledger.claimAll(asked);
    double after = writes(client, "ipblocks");

    assertThat(got).hasSize(128).allSatisfy((ip, r) -> assertThat(r.outcome()).isEqualTo(BlockClaim.Outcome.CLAIMED));
    assertThat(after - before).isEqualTo(2.0);
    assertThat(callbacks.get()).isEqualTo(2);
    IPBlock first = client.resources(IPBlock.class).withName("198.51.100.0-26").get();
    assertThat(first.getSpec().cidr()).isEqualTo("198.51.100.0/26");
    assertThat(first.entries()).hasSize(64).containsKey("198.51.100.63");
    assertThat(first.entries().get("198.51.100.5").owner().name()).isEqualTo("group-2");
    assertThat(client.resources(IPBlock.class).withName("198.51.100.64-26").get().entries()).hasSize(64);

    // Asking again is idempotent and writes nothing; another owner is refused.
    Map<Ip, BlockClaim> again = ledger.claimAll(asked.subList(0, 4));
    assertThat(again.values()).extracting(BlockClaim::outcome).containsOnly(BlockClaim.Outcome.ALREADY_OURS);
    BlockClaim other = ledger.claim(ips.get(0), POOL, ns("intruder"), null);
    assertThat(other.outcome()).isEqualTo(BlockClaim.Outcome.HELD_BY_OTHER);
    assertThat(other.holder().name()).isEqualTo("group-0");
    assertThat(writes(client, "ipblocks")).isEqualTo(after);

    // Release takes back only the owner's entries, one write per block.
    Map<Ip, ClaimOwner> release = new HashMap<>();
    release.put(ips.get(0), ns("group-0"));
    release.put(ips.get(1), ns("not-the-owner"));
    release.put(ips.get(127), ns("group-63"));
    BlockRelease released = ledger.releaseAll(release);
    assertThat(released.released()).containsExactlyInAnyOrder(ips.get(0), ips.get(127));
    assertThat(released.heldByOther()).containsExactly(ips.get(1));
    assertThat(released.complete()).isTrue();
    assertThat(writes(client, "ipblocks") - after).isEqualTo(2.0);
    assertThat(ledger.entry(ips.get(0))).isNull();
    assertThat(ledger.entry(ips.get(1)).owner().name()).isEqualTo("group-0");
  }

  @Test
  void ipv6AddressesLiveInTheir122Block(KubeApiServer server) {
    BlockLedger ledger = new BlockLedger(server.newClient());
    Ip ip = Ip.parse("2001:db8:b10c::41");
    assertThat(ledger.claim(ip, POOL, ns("six"), null).outcome()).isEqualTo(BlockClaim.Outcome.CLAIMED);
    IPBlock b = server.newClient().resources(IPBlock.class).withName("2001-0db8-b10c-0000-0000-0000-0000-0040-122").get();
    assertThat(b.getSpec().cidr()).isEqualTo("2001:db8:b10c::40/122");
    assertThat(b.entries()).containsOnlyKeys("2001:db8:b10c::41");
    assertThat(ledger.entriesOfPool(POOL)).containsKey(ip);
  }

  /**
   * Four writers on separate clients add different addresses of one block at the same time, and
   * race for one address per round: the compare-and-swap makes the losers of each write read again
   * and retry, so every writer's own addresses land, and each contested address has exactly one owner.
   */
  @Test
  void concurrentWritersOfOneBlockAllLandAndNeverDuplicate(KubeApiServer server) throws Exception {
    int writers = 4;
    int rounds = 10;
    int perRound = writers + 1; // one address of its own per writer, one contested
    List<Ip> ips = range("198.51.100.128", 64);
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    List<KubernetesClient> clients = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      clients.add(server.newClient());
    }
    try {
      for (int round = 0; round < rounds; round++) {
        CyclicBarrier start = new CyclicBarrier(writers);
        List<Future<Map<Ip, BlockClaim>>> futures = new ArrayList<>();
        int base = round * perRound;
        for (int w = 0; w < writers; w++) {
          BlockLedger ledger = new BlockLedger(clients.get(w));
          List<BlockRequest> asked = List.of(new BlockRequest(ips.get(base + w), POOL, ns("w" + w), null),
              new BlockRequest(ips.get(base + writers), POOL, ns("w" + w), null));
          futures.add(pool.submit(() -> {
            start.await();
            return ledger.claimAll(asked);
          }));
        }
        int winners = 0;
        for (int w = 0; w < writers; w++) {
          Map<Ip, BlockClaim> got = futures.get(w).get();
          assertThat(got.get(ips.get(base + w)).ours()).as("w%d's own address, round %d", w, round).isTrue();
          winners += got.get(ips.get(base + writers)).ours() ? 1 : 0;
        }
        assertThat(winners).as("holders of the contested address, round %d", round).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
      clients.forEach(KubernetesClient::close);
    }
    IPBlock block = server.newClient().resources(IPBlock.class).withName("198.51.100.128-26").get();
    assertThat(block.entries()).hasSize(rounds * perRound);
    for (int round = 0; round < rounds; round++) {
      for (int w = 0; w < writers; w++) {
        assertThat(block.entries().get(ips.get(round * perRound + w).toString()).owner().name()).isEqualTo("w" + w);
      }
    }
  }

  /**
   * The seeded race: the block writer's entry and an IPClaim creator's claim are both written
   * before either checks (here by writing one side by hand, then letting the other side claim).
   * With the two-sided check the second claimer backs off whichever it is; without it both
   * would hold the address.
   */
  @Test
  void blockWriterBacksOffFromAnIPClaimWrittenFirst(KubeApiServer server) {
    KubernetesClient client = server.newClient();
    Ip ip = Ip.parse("198.51.100.201");
    // A vip claimer created its IPClaim and has not read the block yet.
    IPClaim theirs = client.resources(IPClaim.class).resource(IPClaim.of(ClaimNames.of(ip),
        new IPClaimSpec(ip.toString(), "ipgroup/default/lb", service("web")), Map.of())).create();
    BlockClaim r = new BlockLedger(client).claim(ip, POOL, ns("payments"), null);
    assertThat(r.outcome()).isEqualTo(BlockClaim.Outcome.HELD_BY_OTHER);
    assertThat(r.holder().name()).isEqualTo("web");
    assertThat(new BlockLedger(client).entry(ip)).as("the entry was withdrawn").isNull();
    assertThat(client.resources(IPClaim.class).withName(theirs.getMetadata().getName()).get()).isNotNull();
  }

  @Test
  void ipClaimCreatorBacksOffFromABlockEntryWrittenFirst(KubeApiServer server) {
    KubernetesClient client = server.newClient();
    Ip ip = Ip.parse("198.51.100.202");
    // A block writer wrote its entry and has not checked the IPClaims yet.
    client.resources(IPBlock.class).resource(IPBlock.of(BlockNames.of(ip), BlockNames.cidr(ip),
        Map.of(ip.toString(), new IPBlockEntry(POOL, ns("payments"), null, null)))).create();
    ClaimResult r = new ClusterLedger(client).claim(ip, "ipgroup/default/lb", service("web"));
    assertThat(r.outcome()).isEqualTo(ClaimResult.Outcome.HELD_BY_OTHER);
    assertThat(r.holder().name()).isEqualTo("payments");
    assertThat(client.resources(IPClaim.class).withName(ClaimNames.of(ip)).get()).as("the claim was withdrawn").isNull();
  }

  /**
   * More than {@link BlockLedger#GET_CHECKS} new addresses are checked with LISTs selected by block
   * label: a claim made by {@link ClusterLedger} (labelled with its block) and a claim made before
   * claims carried that label both make the block writer back off.
   */
  @Test
  void aLargeGroupBacksOffFromLabelledAndUnlabelledIPClaims(KubeApiServer server) {
    KubernetesClient client = server.newClient();
    List<Ip> ips = range("203.0.113.0", 20);
    Ip labelled = ips.get(3);
    Ip unlabelled = ips.get(11);
    assertThat(new ClusterLedger(client).claim(labelled, "ipgroup/default/lb", service("labelled")).outcome())
        .isEqualTo(ClaimResult.Outcome.CLAIMED);
    assertThat(client.resources(IPClaim.class).withName(ClaimNames.of(labelled)).get().getMetadata().getLabels())
        .containsEntry(ClusterLedger.LABEL_BLOCK, "203.0.113.0-26");
    client.resources(IPClaim.class).resource(IPClaim.of(ClaimNames.of(unlabelled),
        new IPClaimSpec(unlabelled.toString(), "ipgroup/default/lb", service("older")), Map.of())).create();

    Map<Ip, BlockClaim> got = new BlockLedger(client).claimAll(ips.stream()
        .map(ip -> new BlockRequest(ip, POOL, ns("large-group"), "allocated")).toList());

    assertThat(got.get(labelled).outcome()).isEqualTo(BlockClaim.Outcome.HELD_BY_OTHER);
    assertThat(got.get(labelled).holder().name()).isEqualTo("labelled");
    assertThat(got.get(unlabelled).outcome()).isEqualTo(BlockClaim.Outcome.HELD_BY_OTHER);
    assertThat(got.get(unlabelled).holder().name()).isEqualTo("older");
    assertThat(got.values()).filteredOn(r -> r.outcome() == BlockClaim.Outcome.CLAIMED).hasSize(18);
    BlockLedger check = new BlockLedger(client);
    assertThat(check.entry(labelled)).as("withdrawn").isNull();
    assertThat(check.entry(unlabelled)).as("withdrawn").isNull();
    assertThat(check.entry(ips.get(0)).owner().name()).isEqualTo("large-group");
  }

  /**
   * The race of {@link #blockWriterAndIPClaimCreatorNeverBothWin} with the LIST check: a block writer
   * claims a group of addresses in one call while an IPClaim creator claims the same addresses one by
   * one. No address ever ends with both an entry and a claim, nor with one that its claimer lost.
   */
  @Test
  void aLargeGroupAndIPClaimCreatorsNeverBothWin(KubeApiServer server) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    KubernetesClient blockClient = server.newClient();
    KubernetesClient claimClient = server.newClient();
    KubernetesClient check = server.newClient();
    try {
      for (int round = 0; round < 4; round++) {
        List<Ip> ips = range("203.0.113." + (64 + round * 12), 12);
        CyclicBarrier start = new CyclicBarrier(2);
        Future<Map<Ip, BlockClaim>> b = pool.submit(() -> {
          start.await();
          return new BlockLedger(blockClient).claimAll(ips.stream()
              .map(ip -> new BlockRequest(ip, POOL, ns("group-racer"), "allocated")).toList());
        });
        Future<Map<Ip, Boolean>> c = pool.submit(() -> {
          start.await();
          Map<Ip, Boolean> won = new HashMap<>();
          ClusterLedger claims = new ClusterLedger(claimClient);
          for (Ip ip : ips) {
            won.put(ip, claims.claim(ip, "ipgroup/default/lb", service("one-by-one")).ours());
          }
          return won;
        });
        Map<Ip, BlockClaim> blockResults = b.get();
        Map<Ip, Boolean> claimResults = c.get();
        for (Ip ip : ips) {
          boolean entryStands = new BlockLedger(check).entry(ip) != null;
          boolean claimStands = check.resources(IPClaim.class).withName(ClaimNames.of(ip)).get() != null;
          assertThat(blockResults.get(ip).ours() && claimResults.get(ip)).as("%s won by both", ip).isFalse();
          assertThat(entryStands && claimStands).as("%s held by a block entry and an IPClaim", ip).isFalse();
          assertThat(entryStands).as("%s entry", ip).isEqualTo(blockResults.get(ip).ours());
          assertThat(claimStands).as("%s claim", ip).isEqualTo(claimResults.get(ip));
        }
      }
    } finally {
      pool.shutdownNow();
      blockClient.close();
      claimClient.close();
      check.close();
    }
  }

  /**
   * A real race, many times: for each address a block writer and an IPClaim creator start together
   * on separate clients. Both may back off; never do both win, and whoever won is what the cluster
   * shows (exactly one of the entry and the claim stands, or neither).
   */
  @Test
  void blockWriterAndIPClaimCreatorNeverBothWin(KubeApiServer server) throws Exception {
    List<Ip> ips = range("203.0.113.192", 40);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    int bothWon = 0;
    KubernetesClient blockClient = server.newClient();
    KubernetesClient claimClient = server.newClient();
    KubernetesClient check = server.newClient();
    try {
      for (Ip ip : ips) {
        CyclicBarrier start = new CyclicBarrier(2);
        BlockLedger blocks = new BlockLedger(blockClient);
        ClusterLedger claims = new ClusterLedger(claimClient);
        Future<BlockClaim> b = pool.submit(() -> {
          start.await();
          return blocks.claim(ip, POOL, ns("racer"), null);
        });
        Future<ClaimResult> c = pool.submit((Callable<ClaimResult>) () -> {
          start.await();
          return claims.claim(ip, "ipgroup/default/lb", service("racer"));
        });
        boolean blockWon = b.get().ours();
        boolean claimWon = c.get().ours();
        if (blockWon && claimWon) {
          bothWon++;
        }
        boolean entryStands = new BlockLedger(check).entry(ip) != null;
        boolean claimStands = check.resources(IPClaim.class).withName(ClaimNames.of(ip)).get() != null;
        assertThat(entryStands && claimStands).as("%s held by a block entry and an IPClaim", ip).isFalse();
        assertThat(entryStands).isEqualTo(blockWon);
        assertThat(claimStands).isEqualTo(claimWon);
      }
    } finally {
      pool.shutdownNow();
      blockClient.close();
      claimClient.close();
      check.close();
    }
    assertThat(bothWon).isZero();
  }

  @Test
  void releasingTheLastEntryDeletesTheBlockAndAClaimCreatesItAgain(KubeApiServer server) {
    KubernetesClient client = server.newClient();
    BlockLedger ledger = new BlockLedger(client);
    Ip a = Ip.parse("192.0.2.130");
    Ip b = Ip.parse("192.0.2.131");
    String name = BlockNames.of(a);
    ledger.claimAll(List.of(new BlockRequest(a, POOL, ns("one"), null), new BlockRequest(b, POOL, ns("two"), null)));

    assertThat(ledger.release(a, ns("one"))).isTrue();
    assertThat(client.resources(IPBlock.class).withName(name).get().entries()).containsOnlyKeys(b.toString());
    assertThat(ledger.release(b, ns("somebody-else"))).as("not the holder").isFalse();
    assertThat(ledger.release(b, ns("two"))).isTrue();
    assertThat(client.resources(IPBlock.class).withName(name).get()).as("an emptied block is deleted").isNull();
    assertThat(ledger.release(b, ns("two"))).as("releasing again is a no-op").isTrue();

    assertThat(ledger.claim(a, POOL, ns("three"), null).outcome()).isEqualTo(BlockClaim.Outcome.CLAIMED);
    assertThat(client.resources(IPBlock.class).withName(name).get().entries().get(a.toString()).owner().name())
        .isEqualTo("three");
  }

  /**
   * The delete of an emptied block races a claim in the same block, many times: the delete is
   * conditioned on the version it read, so an entry the claimer was told it holds always stands.
   * An unconditioned delete would lose the claimer's entry whenever its write lands between the
   * releaser's read and its delete.
   */
  @Test
  void deletingAnEmptiedBlockNeverLosesAConcurrentClaim(KubeApiServer server) throws Exception {
    Ip mine = Ip.parse("192.0.2.140");
    Ip theirs = Ip.parse("192.0.2.141");
    ExecutorService pool = Executors.newFixedThreadPool(2);
    KubernetesClient releaserClient = server.newClient();
    KubernetesClient claimerClient = server.newClient();
    KubernetesClient check = server.newClient();
    int deleted = 0;
    try {
      BlockLedger releaser = new BlockLedger(releaserClient);
      BlockLedger claimer = new BlockLedger(claimerClient);
      for (int round = 0; round < 30; round++) {
        assertThat(releaser.claim(mine, POOL, ns("releaser"), null).ours()).isTrue();
        CyclicBarrier start = new CyclicBarrier(2);
        Future<Boolean> released = pool.submit(() -> {
          start.await();
          return releaser.release(mine, ns("releaser"));
        });
        Future<BlockClaim> claimed = pool.submit(() -> {
          start.await();
          return claimer.claim(theirs, POOL, ns("claimer"), null);
        });
        assertThat(released.get()).isTrue();
        BlockClaim c = claimed.get();
        assertThat(c.ours()).as("round %d: %s", round, c).isTrue();
        IPBlock block = check.resources(IPBlock.class).withName(BlockNames.of(theirs)).get();
        assertThat(block).as("round %d: the claimer's block", round).isNotNull();
        assertThat(block.entries()).as("round %d", round).containsOnlyKeys(theirs.toString());
        // Empty the block again for the next round.
        assertThat(claimer.release(theirs, ns("claimer"))).isTrue();
        if (check.resources(IPBlock.class).withName(BlockNames.of(theirs)).get() == null) {
          deleted++;
        }
      }
    } finally {
      pool.shutdownNow();
      releaserClient.close();
      claimerClient.close();
      check.close();
    }
    assertThat(deleted).as("rounds that ended with the block deleted").isEqualTo(30);
  }

  /**
   * Issue 26, a claimer killed between its IPClaim create and its block check: the block writer's
   * entry was written first (and checked: it found no IPClaim), then the claimer created its IPClaim
   * and died. Both records stand. Whichever side claims again, the entry's holder (first) keeps the
   * address and the claimer's side answers held-by-other and withdraws its claim; before, both
   * idempotent paths answered ours.
   */
  @Test
  void aClaimerKilledBeforeItsBlockCheckLeavesTheAddressToTheEntryMadeFirst(KubeApiServer server) {
    KubernetesClient client = server.newClient();
    Ip ip = Ip.parse("10.26.0.10");
    String since = java.time.Instant.now().minusSeconds(60).toString();
    client.resources(IPBlock.class).resource(IPBlock.of(BlockNames.of(ip), BlockNames.cidr(ip),
        Map.of(ip.toString(), new IPBlockEntry(POOL, ns("payments"), "allocated", since)))).create();
    createClaim(client, ip, "ipgroup/default/lb", service("web"));

    BlockClaim entrySide = new BlockLedger(client).claim(ip, POOL, ns("payments"), null);
    ClaimResult claimSide = new ClusterLedger(client).claim(ip, "ipgroup/default/lb", service("web"));

    assertThat(entrySide.ours() && claimSide.ours()).as("%s / %s: both told ours", entrySide, claimSide).isFalse();
    assertThat(entrySide.outcome()).isEqualTo(BlockClaim.Outcome.ALREADY_OURS);
    assertThat(claimSide.outcome()).isEqualTo(ClaimResult.Outcome.HELD_BY_OTHER);
    assertThat(claimSide.holder().name()).isEqualTo("payments");
    assertThat(client.resources(IPClaim.class).withName(ClaimNames.of(ip)).get()).as("the losing claim withdrawn").isNull();
    assertThat(new BlockLedger(client).entry(ip).owner().name()).isEqualTo("payments");
    assertThat(new ClusterLedger(client).claim(ip, "ipgroup/default/lb", service("web")).ours()).isFalse();
  }

  /**
   * Issue 26, a block writer killed between its entry write and its IPClaim check: the IPClaim was
   * made first (and checked: it found no entry), then the writer added its entry and died. The
   * IPClaim's holder keeps the address; the block side answers held-by-other and withdraws its
   * entry, whichever side asks first. Before, both idempotent paths answered ours.
   */
  @Test
  void aBlockWriterKilledBeforeItsIPClaimCheckLeavesTheAddressToTheClaimMadeFirst(KubeApiServer server) {
    KubernetesClient client = server.newClient();
    Ip ip = Ip.parse("10.26.0.70");
    Ip other = Ip.parse("10.26.0.71"); // an entry of the same writer without a conflict stays
    createClaim(client, ip, "ipgroup/default/lb", service("web"));
    String since = java.time.Instant.now().toString();
    client.resources(IPBlock.class).resource(IPBlock.of(BlockNames.of(ip), BlockNames.cidr(ip),
        Map.of(ip.toString(), new IPBlockEntry(POOL, ns("payments"), "allocated", since),
            other.toString(), new IPBlockEntry(POOL, ns("payments"), "allocated", since)))).create();

    ClaimResult claimSide = new ClusterLedger(client).claim(ip, "ipgroup/default/lb", service("web"));
    Map<Ip, BlockClaim> entrySide = new BlockLedger(client).claimAll(List.of(
        new BlockRequest(ip, POOL, ns("payments"), null), new BlockRequest(other, POOL, ns("payments"), null)));

    assertThat(entrySide.get(ip).ours() && claimSide.ours()).as("%s / %s: both told ours", entrySide, claimSide).isFalse();
    assertThat(claimSide.outcome()).isEqualTo(ClaimResult.Outcome.ALREADY_OURS);
    assertThat(entrySide.get(ip).outcome()).isEqualTo(BlockClaim.Outcome.HELD_BY_OTHER);
    assertThat(entrySide.get(ip).holder().name()).isEqualTo("web");
    assertThat(entrySide.get(other).outcome()).isEqualTo(BlockClaim.Outcome.ALREADY_OURS);
    assertThat(new BlockLedger(client).entry(ip)).as("the losing entry withdrawn").isNull();
    assertThat(new BlockLedger(client).entry(other).owner().name()).isEqualTo("payments");
    assertThat(client.resources(IPClaim.class).withName(ClaimNames.of(ip)).get()).isNotNull();
  }

  /**
   * The same two half-written states in one group larger than {@link BlockLedger#GET_CHECKS} (the
   * IPClaims read by LIST): each address ends with one holder told ours, the one made first.
   */
  @Test
  void aLargeGroupOfStandingEntriesIsCheckedAgainToo(KubeApiServer server) {
    KubernetesClient client = server.newClient();
    List<Ip> ips = range("10.26.0.128", 8);
    Ip claimFirst = ips.get(2);
    Ip entryFirst = ips.get(5);
    createClaim(client, claimFirst, "ipgroup/default/lb", service("older"));
    String now = java.time.Instant.now().toString();
    String before = java.time.Instant.now().minusSeconds(120).toString();
    Map<String, IPBlockEntry> entries = new java.util.TreeMap<>();
    for (Ip ip : ips) {
      entries.put(ip.toString(), new IPBlockEntry(POOL, ns("group"), "allocated", ip.equals(entryFirst) ? before : now));
    }
    client.resources(IPBlock.class).resource(IPBlock.of(BlockNames.of(ips.get(0)), BlockNames.cidr(ips.get(0)), entries))
        .create();
    createClaim(client, entryFirst, "ipgroup/default/lb", service("newer"));

    Map<Ip, BlockClaim> got = new BlockLedger(client).claimAll(ips.stream()
        .map(ip -> new BlockRequest(ip, POOL, ns("group"), null)).toList());
    ClusterLedger claims = new ClusterLedger(client);
    ClaimResult older = claims.claim(claimFirst, "ipgroup/default/lb", service("older"));
    ClaimResult newer = claims.claim(entryFirst, "ipgroup/default/lb", service("newer"));

    assertThat(got.get(claimFirst).outcome()).isEqualTo(BlockClaim.Outcome.HELD_BY_OTHER);
    assertThat(older.outcome()).isEqualTo(ClaimResult.Outcome.ALREADY_OURS);
    assertThat(got.get(entryFirst).outcome()).isEqualTo(BlockClaim.Outcome.ALREADY_OURS);
    assertThat(newer.outcome()).isEqualTo(ClaimResult.Outcome.HELD_BY_OTHER);
    assertThat(got.values()).filteredOn(BlockClaim::ours).hasSize(7);
    assertThat(new BlockLedger(client).entry(claimFirst)).isNull();
    assertThat(client.resources(IPClaim.class).withName(ClaimNames.of(entryFirst)).get()).isNull();
  }

  /** Issue 26: an entry of the same namespace in another EgressIPAM's pool is another holder's. */
  @Test
  void anEntryOfAnotherPoolIsNotOurs(KubeApiServer server) {
    KubernetesClient client = server.newClient();
    BlockLedger ledger = new BlockLedger(client);
    Ip ip = Ip.parse("10.26.0.200");
    assertThat(ledger.claim(ip, "egressipam/a", ns("payments"), null).outcome()).isEqualTo(BlockClaim.Outcome.CLAIMED);

    BlockClaim fromB = ledger.claim(ip, "egressipam/b", ns("payments"), null);
    assertThat(fromB.outcome()).isEqualTo(BlockClaim.Outcome.HELD_BY_OTHER);
    BlockRelease byB = ledger.releaseAll(Map.of(ip, ns("payments")), "egressipam/b");
    assertThat(byB.heldByOther()).containsExactly(ip);
    assertThat(byB.released()).isEmpty();
    assertThat(ledger.release(ip, ns("payments"), "egressipam/b")).isFalse();
    assertThat(ledger.entry(ip).pool()).isEqualTo("egressipam/a");
    assertThat(ledger.claim(ip, "egressipam/a", ns("payments"), null).outcome()).isEqualTo(BlockClaim.Outcome.ALREADY_OURS);
    assertThat(ledger.release(ip, ns("payments"), "egressipam/a")).isTrue();
    assertThat(ledger.entry(ip)).isNull();
  }

  /**
   * Issue 26: a withdrawal that fails (every write of the blocks refused, here 409 from a fault
   * proxy, so each block stays contended) is reported per address, with why, and the entries stand;
   * once the API server accepts writes, the same release goes through.
   */
  @Test
  void aReleaseThatCannotBeWrittenSaysWhichAddressesAreStillHeld(KubeApiServer server) throws Exception {
    KubernetesClient client = server.newClient();
    Ip a = Ip.parse("10.26.1.10");
    Ip b = Ip.parse("10.26.1.70"); // another block
    Ip absent = Ip.parse("10.26.1.11");
    new BlockLedger(client).claimAll(List.of(new BlockRequest(a, POOL, ns("one"), null),
        new BlockRequest(b, POOL, ns("one"), null)));
    Map<Ip, ClaimOwner> release = Map.of(a, ns("one"), b, ns("one"), absent, ns("one"));
    try (ApiFaultProxy proxy = new ApiFaultProxy(server, 7L);
        KubernetesClient viaProxy = new KubernetesClientBuilder()
            .withConfig(Config.fromKubeconfig(proxy.kubeconfig())).build()) {
      proxy.rate(ApiFaultProxy.Fault.CONFLICT, 1.0);
      long start = System.nanoTime();
      BlockRelease failed = new BlockLedger(viaProxy).releaseAll(release, POOL);
      System.out.printf("[block-release] refused writes reported after %d ms, %s%n",
          (System.nanoTime() - start) / 1_000_000, proxy.injected());

      assertThat(proxy.injected().get(ApiFaultProxy.Fault.CONFLICT)).isGreaterThanOrEqualTo(2L);
      assertThat(failed.complete()).isFalse();
      assertThat(failed.stillHeld()).containsOnlyKeys(a, b, absent);
      assertThat(failed.stillHeld().get(a)).contains("was changed by others");
      assertThat(failed.released()).isEmpty();
      assertThat(new BlockLedger(client).entry(a).owner().name()).isEqualTo("one");
      assertThat(new BlockLedger(client).entry(b).owner().name()).isEqualTo("one");

      proxy.inject(false);
      BlockRelease done = new BlockLedger(viaProxy).releaseAll(release, POOL);
      assertThat(done.complete()).isTrue();
      assertThat(done.released()).containsExactlyInAnyOrder(a, b, absent);
    }
    assertThat(new BlockLedger(client).entry(a)).isNull();
    assertThat(new BlockLedger(client).entry(b)).isNull();
  }

  /**
   * Issue 26: an IPClaim without a spec (the CRD allows it) names an address no reader can use: the
   * block writer treats it as another's and backs off instead of failing; a block entry under a key
   * that is not an address is skipped by the pool's readers and listed as malformed.
   */
  @Test
  void malformedRecordsAreSkippedListedAndNeverFree(KubeApiServer server) {
    KubernetesClient client = server.newClient();
    Ip ip = Ip.parse("10.26.2.10");
    IPClaim specless = new IPClaim();
    specless.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(ClaimNames.of(ip)).build());
    client.resource(specless).create();
    BlockLedger ledger = new BlockLedger(client);

    BlockClaim r = ledger.claim(ip, POOL, ns("payments"), null);
    assertThat(r.outcome()).isEqualTo(BlockClaim.Outcome.HELD_BY_OTHER);
    assertThat(r.holder().controller()).isEqualTo(Malformed.CONTROLLER);
    assertThat(ledger.entry(ip)).isNull();

    Ip good = Ip.parse("10.26.2.70");
    client.resources(IPBlock.class).resource(IPBlock.of(BlockNames.of(good), BlockNames.cidr(good), Map.of(
        good.toString(), new IPBlockEntry(POOL, ns("payments"), null, null),
        "not-an-address", new IPBlockEntry(POOL, ns("payments"), null, null)))).create();
    assertThat(ledger.entriesOfPool(POOL)).containsKey(good);
    assertThat(ledger.malformedEntries()).contains(new MalformedEntry(BlockNames.of(good), "not-an-address",
        "key 'not-an-address' is not an address"));
  }

  private static IPClaim createClaim(KubernetesClient client, Ip ip, String pool, ClaimOwner owner) {
    return client.resources(IPClaim.class).resource(IPClaim.of(ClaimNames.of(ip), new IPClaimSpec(ip.toString(), pool, owner),
        ClusterLedger.labels(ip, pool, owner))).create();
  }

  /** Writes to a resource as the API server counts them (its own metric). */
  static double writes(KubernetesClient client, String resource) {
    Matcher m = Pattern.compile("^apiserver_request_total\\{([^}]*)\\} ([0-9.e+]+)$", Pattern.MULTILINE)
        .matcher(client.raw("/metrics"));
    double total = 0;
    while (m.find()) {
      String labels = m.group(1);
      if (labels.contains("resource=\"" + resource + "\"") && labels.matches(".*verb=\"(POST|PUT|PATCH|DELETE|APPLY)\".*")) {
        total += Double.parseDouble(m.group(2));
      }
    }
    return total;
  }
}
