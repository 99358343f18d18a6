package org.ipamoperators.controller.common.ledger;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Function;
import org.ipamoperators.core.address.Ip;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ledger kept in {@link IPBlock}s: one object per 64 addresses, written by compare-and-swap.
 *
 * <p><b>The lock.</b> An entry is added by a PUT carrying the resourceVersion just read (or by
 * the create of an absent block); the API server refuses a write from a stale read with 409, so two
 * writers can never both add an entry for one address. A 409 is answered by reading again and
 * retrying, at most {@link #MAX_ATTEMPTS} times per block and never longer than {@link #MAX_WAIT}
 * in all; then that block's addresses fail for this pass only (tried again at the next).
 *
 * <p><b>Group commit.</b> {@link #claimAll} writes all the addresses of one call that fall in one
 * block in one update, so a burst costs a write per block touched, not per address.
 *
 * <p><b>Coexistence with IPClaims.</b> Other controllers (and older versions of this one) hold
 * addresses with one {@link IPClaim} each. Both sides check after they write, against the API
 * server and not a cache: the block writer, once its entry is in, looks for an IPClaim of each new
 * address and withdraws its entry when one exists; {@link ClusterLedger#claim}, once its claim is
 * created, reads the address's block and deletes its claim when an entry exists. Writes and reads
 * of the API server are linearizable, so of two concurrent claimers at least one sees the other:
 * both may back off, never both win. A process killed between its write and its check leaves an
 * entry and an IPClaim standing for one address; every idempotent claim checks the other ledger
 * again (here and in {@link ClusterLedger#claim}), and {@link SplitHold} decides which record keeps
 * the address, the same way on every replica, so the two holders are never both told "ours". The
 * losing record is withdrawn when its own owner next claims it; `ipam audit` reports the address as
 * claimed twice until then.
 *
 * <p><b>Holders.</b> An entry is ours when its owner is the same ({@link ClaimOwner#sameAs}) and its
 * pool is the pool asked: the same namespace in another EgressIPAM is another holder. Entries no
 * reader can use are skipped and listed ({@link #malformedEntries}); their addresses count as held.
 *
 * <p><b>Empty blocks go.</b> A release that leaves a block without entries deletes it, conditioned on
 * the version read, so a block that gained an entry meanwhile is kept (409, read again). A writer
 * whose read block is deleted before its PUT gets 404 and reads again, finding it absent: it creates
 * it, and creation is again the lock.
 */
public final class BlockLedger {
  /** Writes per block before the block counts as contended for this pass. */
  public static final int MAX_ATTEMPTS = 10;
  /** Longest time spent on one block's conflicts. */
  public static final Duration MAX_WAIT = Duration.ofSeconds(60);
  /**
   * Up to this many new addresses are checked with a GET each; more with LISTs of the IPClaims of
   * their blocks ({@link #claimsThatMayHold}).
   */
  static final int GET_CHECKS = 4;
  /** Block names per label-selector LIST, so a request line stays short. */
  static final int BLOCKS_PER_LIST = 40;
  private static final Logger LOG = LoggerFactory.getLogger(BlockLedger.class);

  private final KubernetesClient client;
  private final Consumer<IPBlock> written;
  private final Clock clock;

  public BlockLedger(KubernetesClient client) {
    this(client, b -> { });
  }

  /** @param written told of every block object this ledger wrote, as the API server answered it */
  public BlockLedger(KubernetesClient client, Consumer<IPBlock> written) {
    this.client = client;
    this.written = written;
    this.clock = Clock.systemUTC();
  }

  private NonNamespaceOperation<IPBlock, KubernetesResourceList<IPBlock>, Resource<IPBlock>> blocks() {
    return client.resources(IPBlock.class);
  }

  /** Thrown when a block stayed contended for {@link #MAX_ATTEMPTS} writes or {@link #MAX_WAIT}. */
  public static final class ContendedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    ContendedException(String name, int attempts) {
      super("IPBlock " + name + " was changed by others during " + attempts + " attempts; will retry");
    }
  }

  /** What one compare-and-swap wants: the new entries (null: nothing to write) and the answer. */
  private record Mutation<T>(Map<String, IPBlockEntry> entries, T result) {}

  /**
   * Claims addresses, each for its own owner and pool, in one write per block. Idempotent: an
   * address whose entry has the same owner and pool is {@code ALREADY_OURS} (an entry of the same
   * owner in another pool is another holder's). Never overwrites an entry of another holder. Every
   * address answered ours is then checked against the IPClaims ({@link #checkAgainstIPClaims}). The
   * answer has one result per distinct address, in the order asked.
   */
  public Map<Ip, BlockClaim> claimAll(Collection<BlockRequest> requests) {
    Map<String, List<BlockRequest>> byBlock = new TreeMap<>();
    for (BlockRequest r : requests) {
      byBlock.computeIfAbsent(BlockNames.of(r.ip()), k -> new ArrayList<>()).add(r);
    }
    Map<Ip, BlockClaim> results = new HashMap<>();
    Map<Ip, IPBlockEntry> standing = new HashMap<>();
    for (var e : byBlock.entrySet()) {
      List<BlockRequest> asked = e.getValue();
      try {
        results.putAll(cas(e.getKey(), BlockNames.cidr(asked.get(0).ip()),
            entries -> claimIn(e.getKey(), entries, asked, standing)));
      } catch (ContendedException | KubernetesClientException x) {
        LOG.warn("claiming {} address(es) in IPBlock {} failed: {}", asked.size(), e.getKey(), x.getMessage());
        asked.forEach(r -> results.put(r.ip(), BlockClaim.failed(r.ip(), x.getMessage())));
      }
    }
    checkAgainstIPClaims(requests, results, standing);
    Map<Ip, BlockClaim> ordered = new LinkedHashMap<>();
    requests.forEach(r -> ordered.putIfAbsent(r.ip(), results.get(r.ip())));
    return ordered;
  }

  /**
   * One block's part of {@link #claimAll}: adds an entry for each free address; records in
   * {@code standing} the entries found already ours (for the check). {@code since} is read per
   * attempt, just before the write, as {@link SplitHold} compares it.
   */
  private Mutation<Map<Ip, BlockClaim>> claimIn(String block, Map<String, IPBlockEntry> entries,
      List<BlockRequest> asked, Map<Ip, IPBlockEntry> standing) {
    String since = Instant.now(clock).toString();
    Map<String, IPBlockEntry> next = new TreeMap<>(entries);
    Map<Ip, BlockClaim> answer = new HashMap<>();
    boolean changed = false;
    for (BlockRequest r : asked) {
      String key = r.ip().toString();
      IPBlockEntry held = next.get(key);
      if (held == null) {
        next.put(key, new IPBlockEntry(r.pool(), r.owner(), r.origin(), since));
        answer.put(r.ip(), BlockClaim.of(r.ip(), BlockClaim.Outcome.CLAIMED, r.owner()));
        changed = true;
      } else if (SplitHold.sameHolder(held.owner(), held.pool(), r.owner(), r.pool())) {
        if (answer.putIfAbsent(r.ip(), BlockClaim.of(r.ip(), BlockClaim.Outcome.ALREADY_OURS, held.owner())) == null) {
          standing.put(r.ip(), held);
        }
      } else {
        ClaimOwner holder = held.owner() != null ? held.owner() : Malformed.holder("IPBlock", block);
        answer.putIfAbsent(r.ip(), BlockClaim.of(r.ip(), BlockClaim.Outcome.HELD_BY_OTHER, holder));
      }
    }
    return new Mutation<>(changed ? next : null, answer);
  }

  /** Who may remove an entry: this owner, of this pool (null: of any pool). */
  private record Holder(ClaimOwner owner, String pool) {
    boolean holds(IPBlockEntry e) {
      return e.owner() != null && e.owner().sameAs(owner) && (pool == null || pool.equals(e.pool()));
    }
  }

  /**
   * The block writer's side of the two-sided check, against the IPClaims on the API server, for
   * every address answered ours: a new entry whose address has an IPClaim is given back and the
   * address counts as taken (or as ours, when the claim is the same holder's, e.g. made by an older
   * version). An entry that already stood (an idempotent claim) may be half of a split hold left by
   * a killed process: when the IPClaim is another holder's, {@link SplitHold} decides, and an entry
   * that loses is given back. An entry that could not be given back, or whose check failed, is
   * answered FAILED, never ours.
   */
  private void checkAgainstIPClaims(Collection<BlockRequest> requests, Map<Ip, BlockClaim> results,
      Map<Ip, IPBlockEntry> standing) {
    Map<Ip, BlockRequest> toCheck = new LinkedHashMap<>();
    for (BlockRequest r : requests) {
      BlockClaim c = results.get(r.ip());
      if (c.ours() && r.owner().sameAs(c.holder())) {
        toCheck.putIfAbsent(r.ip(), r);
      }
    }
    if (toCheck.isEmpty()) {
      return;
    }
    Map<Ip, IPClaim> found;
    try {
      found = ipClaimsOf(toCheck.values());
    } catch (KubernetesClientException e) {
      // Unchecked entries must not stand as ours: new ones are given back; all fail this pass.
      LOG.warn("could not check IPClaims for {} block entries: {}", toCheck.size(), e.getMessage());
      Map<Ip, Holder> back = new HashMap<>();
      toCheck.values().stream().filter(r -> results.get(r.ip()).outcome() == BlockClaim.Outcome.CLAIMED)
          .forEach(r -> back.put(r.ip(), new Holder(r.owner(), r.pool())));
      BlockRelease given = release(back);
      toCheck.keySet().forEach(ip -> results.put(ip, BlockClaim.failed(ip, "IPClaims could not be checked: "
          + e.getMessage() + (given.stillHeld().containsKey(ip) ? "; the new entry may still stand" : ""))));
      return;
    }
    Map<Ip, Holder> back = new HashMap<>();
    found.forEach((ip, claim) -> {
      BlockRequest r = toCheck.get(ip);
      boolean fresh = results.get(ip).outcome() == BlockClaim.Outcome.CLAIMED;
      IPBlockEntry held = standing.get(ip);
      if (fresh || !sameHolder(claim, r) && (held == null || SplitHold.winner(claim, held) == SplitHold.Winner.CLAIM)) {
        back.put(ip, new Holder(r.owner(), r.pool()));
      }
    });
    BlockRelease given = release(back);
    for (Ip ip : back.keySet()) {
      IPClaim claim = found.get(ip);
      String why = given.stillHeld().get(ip);
      if (why != null) {
        results.put(ip, BlockClaim.failed(ip, "IPClaim " + claim.getMetadata().getName()
            + " exists, and the block entry could not be withdrawn: " + why));
      } else {
        results.put(ip, BlockClaim.of(ip, sameHolder(claim, toCheck.get(ip)) ? BlockClaim.Outcome.ALREADY_OURS
            : BlockClaim.Outcome.HELD_BY_OTHER, Malformed.ownerOf(claim)));
      }
    }
  }

  private static boolean sameHolder(IPClaim claim, BlockRequest r) {
    return Malformed.problem(claim) == null
        && SplitHold.sameHolder(claim.getSpec().owner(), claim.getSpec().pool(), r.owner(), r.pool());
  }

  /**
   * The IPClaims of these addresses on the API server, by address: a GET each for a few, else the
   * LISTs of {@link #claimsThatMayHold}. None when the cluster has no IPClaim resource.
   */
  private Map<Ip, IPClaim> ipClaimsOf(Collection<BlockRequest> asked) {
    Map<Ip, IPClaim> found = new HashMap<>();
    try {
      if (asked.size() <= GET_CHECKS) {
        for (BlockRequest r : asked) {
          IPClaim c = client.resources(IPClaim.class).withName(ClaimNames.of(r.ip())).get();
          if (c != null) {
            found.put(r.ip(), c);
          }
        }
      } else {
        Map<String, IPClaim> byName = new HashMap<>();
        claimsThatMayHold(asked).forEach(c -> byName.put(c.getMetadata().getName(), c));
        for (BlockRequest r : asked) {
          IPClaim c = byName.get(ClaimNames.of(r.ip()));
          if (c != null) {
            found.put(r.ip(), c);
          }
        }
      }
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
    return found;
  }

  /**
   * Every IPClaim that may hold one of these addresses, read from the API server: the claims labelled
   * with one of their blocks, and the claims without a block label (made before claims carried one).
   * A claim's labels are written with its creation, so a claim created before these reads is in one
   * of the two answers; one created after them finds this writer's entry in its own check. The cost
   * follows the blocks touched (and the unlabelled claims left), not every IPClaim in the cluster.
   */
  private List<IPClaim> claimsThatMayHold(Collection<BlockRequest> asked) {
    List<String> blockNames = asked.stream().map(r -> BlockNames.of(r.ip())).distinct().sorted().toList();
    List<IPClaim> out = new ArrayList<>();
    for (int i = 0; i < blockNames.size(); i += BLOCKS_PER_LIST) {
      String[] some = blockNames.subList(i, Math.min(blockNames.size(), i + BLOCKS_PER_LIST)).toArray(String[]::new);
      out.addAll(client.resources(IPClaim.class).withLabelIn(ClusterLedger.LABEL_BLOCK, some).list().getItems());
    }
    out.addAll(client.resources(IPClaim.class).withoutLabel(ClusterLedger.LABEL_BLOCK).list().getItems());
    return out;
  }

  /** Claims one address (a block write of its own). */
  public BlockClaim claim(Ip ip, String pool, ClaimOwner owner, String origin) {
    return claimAll(List.of(new BlockRequest(ip, pool, owner, origin))).get(ip);
  }

  /**
   * Removes the entries of these addresses that their given owner holds, in any pool, one write per
   * block (a delete when no entry is left); an entry held by anyone else is left. The answer says,
   * per address, whether the entry is gone, another holder's, or possibly still standing because
   * the block stayed contended or the API server refused ({@link BlockRelease#stillHeld}): the
   * caller keeps those addresses and releases them again later. Prefer
   * {@link #releaseAll(Map, String)}, which leaves the same owner's entries of other pools alone.
   */
  public BlockRelease releaseAll(Map<Ip, ClaimOwner> owners) {
    Map<Ip, Holder> holders = new HashMap<>();
    owners.forEach((ip, owner) -> holders.put(ip, new Holder(owner, null)));
    return release(holders);
  }

  /** {@link #releaseAll(Map)} of the entries of one pool only: an entry of another pool counts as another holder's. */
  public BlockRelease releaseAll(Map<Ip, ClaimOwner> owners, String pool) {
    Map<Ip, Holder> holders = new HashMap<>();
    owners.forEach((ip, owner) -> holders.put(ip, new Holder(owner, pool)));
    return release(holders);
  }

  private BlockRelease release(Map<Ip, Holder> holders) {
    Map<String, List<Ip>> byBlock = new TreeMap<>();
    holders.keySet().forEach(ip -> byBlock.computeIfAbsent(BlockNames.of(ip), k -> new ArrayList<>()).add(ip));
    Set<Ip> released = new HashSet<>();
    Set<Ip> others = new HashSet<>();
    Map<Ip, String> stillHeld = new HashMap<>();
    for (var e : byBlock.entrySet()) {
      List<Ip> ips = e.getValue();
      try {
        Map<Ip, Boolean> gone = cas(e.getKey(), BlockNames.cidr(ips.get(0)), entries -> {
          Map<String, IPBlockEntry> next = new TreeMap<>(entries);
          Map<Ip, Boolean> answer = new HashMap<>();
          boolean changed = false;
          for (Ip ip : ips) {
            IPBlockEntry held = next.get(ip.toString());
            boolean ours = held != null && holders.get(ip).holds(held);
            if (ours) {
              next.remove(ip.toString());
              changed = true;
            }
            answer.put(ip, held == null || ours);
          }
          return new Mutation<>(changed ? next : null, answer);
        }, false);
        gone.forEach((ip, g) -> (g ? released : others).add(ip));
      } catch (ContendedException | KubernetesClientException x) {
        LOG.warn("releasing {} address(es) in IPBlock {} failed: {}", ips.size(), e.getKey(), x.getMessage());
        ips.forEach(ip -> stillHeld.put(ip, String.valueOf(x.getMessage())));
      }
    }
    return new BlockRelease(released, others, stillHeld);
  }

  /** Releases one address if this owner holds it (in any pool); true when its entry is gone. */
  public boolean release(Ip ip, ClaimOwner owner) {
    return releaseAll(Map.of(ip, owner)).released().contains(ip);
  }

  /** Releases one address if this owner holds it in this pool; true when its entry is gone. */
  public boolean release(Ip ip, ClaimOwner owner, String pool) {
    return releaseAll(Map.of(ip, owner), pool).released().contains(ip);
  }

  /** The block holding an address, straight from the API server (null when absent). */
  public IPBlock blockOf(Ip ip) {
    return blocks().withName(BlockNames.of(ip)).get();
  }

  /** The entry of an address, straight from the API server. */
  public IPBlockEntry entry(Ip ip) {
    IPBlock b = blockOf(ip);
    return b == null ? null : b.entries().get(ip.toString());
  }

  /** Every block in the cluster. */
  public List<IPBlock> all() {
    return blocks().list().getItems();
  }

  /**
   * Every well-formed entry of a pool, address to entry, straight from the API server. Entries no
   * reader can use are left out; {@link #malformedEntries} lists them.
   */
  public Map<Ip, IPBlockEntry> entriesOfPool(String pool) {
    Map<Ip, IPBlockEntry> out = new TreeMap<>();
    for (IPBlock b : all()) {
      b.entries().forEach((address, entry) -> {
        if (Malformed.problem(address, entry) == null && pool.equals(entry.pool())) {
          out.put(Ip.parse(address), entry);
        }
      });
    }
    return out;
  }

  /**
   * The entries of every block that no reader can use (a key that is not an address, no owner or no
   * pool), for the caller to report. {@link #claimAll} treats such an entry's address as another's.
   */
  public List<MalformedEntry> malformedEntries() {
    List<MalformedEntry> out = new ArrayList<>();
    for (IPBlock b : all()) {
      b.entries().forEach((address, entry) -> {
        String problem = Malformed.problem(address, entry);
        if (problem != null) {
          out.add(new MalformedEntry(b.getMetadata().getName(), address, problem));
        }
      });
    }
    return out;
  }

  private <T> T cas(String name, String cidr, Function<Map<String, IPBlockEntry>, Mutation<T>> change) {
    return cas(name, cidr, change, true);
  }

  /**
   * Reads the block, applies the change, writes it conditioned on the version read (create when
   * absent, or when {@code create} is false and it is absent, nothing), again on 409.
   */
  private <T> T cas(String name, String cidr, Function<Map<String, IPBlockEntry>, Mutation<T>> change, boolean create) {
    long deadline = System.nanoTime() + MAX_WAIT.toNanos();
    long pause = 20;
    for (int attempt = 1; ; attempt++) {
      IPBlock current = blocks().withName(name).get();
      Mutation<T> m = change.apply(current == null ? Map.of() : current.entries());
      if (m.entries() == null || current == null && !create) {
        return m.result();
      }
      try {
        IPBlock answer;
        if (current != null && m.entries().isEmpty() && !create) {
          // The last entry released: the block goes, unless it changed since it was read (409 or 404: read again).
          if (ConditionedDelete.delete(client, current)) {
            current.setSpec(new IPBlockSpec(current.getSpec() == null ? cidr : current.getSpec().cidr(), Map.of()));
            written.accept(current);
            return m.result();
          }
        } else if (current == null) {
          answer = blocks().resource(IPBlock.of(name, cidr, m.entries())).create();
          written.accept(answer);
          return m.result();
        } else {
          current.setSpec(new IPBlockSpec(current.getSpec() == null || current.getSpec().cidr() == null
              ? cidr : current.getSpec().cidr(), m.entries()));
          answer = blocks().resource(current).update(); // PUT with the resourceVersion read: 409 when stale
          written.accept(answer);
          return m.result();
        }
      } catch (KubernetesClientException e) {
        // 409: changed since read; 404: deleted since read (emptied by a release). Both: read again.
        if (e.getCode() != 409 && e.getCode() != 404) {
          throw e;
        }
      }
      if (attempt >= MAX_ATTEMPTS || System.nanoTime() + pause * 1_000_000 > deadline) {
        throw new ContendedException(name, attempt);
      }
      try {
        Thread.sleep(ThreadLocalRandom.current().nextLong(pause / 2, pause + 1));
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw new ContendedException(name, attempt);
      }
      pause = Math.min(pause * 2, 5_000);
    }
  }
}
