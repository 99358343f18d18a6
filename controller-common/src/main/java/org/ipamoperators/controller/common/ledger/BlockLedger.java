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
 * both may back off, never both win. The one window left is a process killed between its write and
 * its check: then an entry and an IPClaim may both stand for one address until `ipam audit`, which
 * reads both, reports it as claimed twice.
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
   * Claims addresses, each for its own owner, in one write per block. Idempotent: an address
   * already held by the same owner is {@code ALREADY_OURS}. Never overwrites an entry of another
   * owner. The answer has one result per distinct address, in the order asked.
   */
  public Map<Ip, BlockClaim> claimAll(Collection<BlockRequest> requests) {
    Map<String, List<BlockRequest>> byBlock = new TreeMap<>();
    for (BlockRequest r : requests) {
      byBlock.computeIfAbsent(BlockNames.of(r.ip()), k -> new ArrayList<>()).add(r);
    }
    Map<Ip, BlockClaim> results = new HashMap<>();
    String since = Instant.now(clock).toString();
    for (var e : byBlock.entrySet()) {
      List<BlockRequest> asked = e.getValue();
      try {
        results.putAll(cas(e.getKey(), BlockNames.cidr(asked.get(0).ip()), entries -> {
          Map<String, IPBlockEntry> next = new TreeMap<>(entries);
          Map<Ip, BlockClaim> answer = new HashMap<>();
          boolean changed = false;
          for (BlockRequest r : asked) {
            String key = r.ip().toString();
            IPBlockEntry held = next.get(key);
            if (held != null) {
              boolean ours = held.owner().sameAs(r.owner());
              answer.putIfAbsent(r.ip(), BlockClaim.of(r.ip(),
                  ours ? BlockClaim.Outcome.ALREADY_OURS : BlockClaim.Outcome.HELD_BY_OTHER, held.owner()));
            } else {
              next.put(key, new IPBlockEntry(r.pool(), r.owner(), r.origin(), since));
              answer.put(r.ip(), BlockClaim.of(r.ip(), BlockClaim.Outcome.CLAIMED, r.owner()));
              changed = true;
            }
          }
          return new Mutation<>(changed ? next : null, answer);
        }));
      } catch (ContendedException | KubernetesClientException x) {
        LOG.warn("claiming {} address(es) in IPBlock {} failed: {}", asked.size(), e.getKey(), x.getMessage());
        asked.forEach(r -> results.put(r.ip(), BlockClaim.failed(r.ip(), x.getMessage())));
      }
    }
    withdrawClaimedByIPClaims(requests, results);
    Map<Ip, BlockClaim> ordered = new LinkedHashMap<>();
    requests.forEach(r -> ordered.putIfAbsent(r.ip(), results.get(r.ip())));
    return ordered;
  }

  /**
   * The block writer's side of the two-sided check: every address just written is looked up among
   * the IPClaims on the API server; an address that has one gives its entry back and counts as
   * taken (or as ours, when the claim is the same owner's, e.g. made by an older version).
   */
  private void withdrawClaimedByIPClaims(Collection<BlockRequest> requests, Map<Ip, BlockClaim> results) {
    List<BlockRequest> fresh = requests.stream()
        .filter(r -> results.get(r.ip()).outcome() == BlockClaim.Outcome.CLAIMED && r.owner().sameAs(results.get(r.ip()).holder()))
        .toList();
    if (fresh.isEmpty()) {
      return;
    }
    Map<Ip, IPClaim> found = new HashMap<>();
    try {
      if (fresh.size() <= GET_CHECKS) {
        for (BlockRequest r : fresh) {
          IPClaim c = client.resources(IPClaim.class).withName(ClaimNames.of(r.ip())).get();
          if (c != null) {
            found.put(r.ip(), c);
          }
        }
      } else {
        Map<String, IPClaim> byName = new HashMap<>();
        claimsThatMayHold(fresh).forEach(c -> byName.put(c.getMetadata().getName(), c));
        for (BlockRequest r : fresh) {
          IPClaim c = byName.get(ClaimNames.of(r.ip()));
          if (c != null) {
            found.put(r.ip(), c);
          }
        }
      }
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        // Unchecked entries must not stand: give them all back and fail this pass for them.
        LOG.warn("could not check IPClaims for {} new block entries: {}", fresh.size(), e.getMessage());
        Map<Ip, ClaimOwner> back = new HashMap<>();
        fresh.forEach(r -> back.put(r.ip(), r.owner()));
        releaseAll(back);
        fresh.forEach(r -> results.put(r.ip(), BlockClaim.failed(r.ip(), "IPClaims could not be checked: " + e.getMessage())));
        return;
      }
    }
    if (found.isEmpty()) {
      return;
    }
    Map<Ip, ClaimOwner> back = new HashMap<>();
    for (BlockRequest r : fresh) {
      if (found.containsKey(r.ip())) {
        back.put(r.ip(), r.owner());
      }
    }
    Set<Ip> withdrawn = releaseAll(back);
    for (var e : found.entrySet()) {
      Ip ip = e.getKey();
      ClaimOwner holder = e.getValue().getSpec() == null ? null : e.getValue().getSpec().owner();
      if (!withdrawn.contains(ip)) {
        results.put(ip, BlockClaim.failed(ip, "IPClaim " + e.getValue().getMetadata().getName()
            + " exists, and the block entry could not be withdrawn"));
      } else {
        boolean ours = holder != null && holder.sameAs(back.get(ip));
        results.put(ip, BlockClaim.of(ip, ours ? BlockClaim.Outcome.ALREADY_OURS : BlockClaim.Outcome.HELD_BY_OTHER,
            holder));
      }
    }
  }

  /**
   * Every IPClaim that may hold one of these addresses, read from the API server: the claims labelled
   * with one of their blocks, and the claims without a block label (made before claims carried one).
   * A claim's labels are written with its creation, so a claim created before these reads is in one
   * of the two answers; one created after them finds this writer's entry in its own check. The cost
   * follows the blocks touched (and the unlabelled claims left), not every IPClaim in the cluster.
   */
  private List<IPClaim> claimsThatMayHold(List<BlockRequest> fresh) {
    List<String> blockNames = fresh.stream().map(r -> BlockNames.of(r.ip())).distinct().sorted().toList();
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
   * Removes the entries of these addresses that their given owner holds, one write per block (a
   * delete when no entry is left); an entry held by anyone else is left. Returns the addresses whose entries are gone (removed now,
   * or not there). A block that stays contended keeps its entries (logged; the next pass retries).
   */
  public Set<Ip> releaseAll(Map<Ip, ClaimOwner> owners) {
    Map<String, List<Ip>> byBlock = new TreeMap<>();
    owners.keySet().forEach(ip -> byBlock.computeIfAbsent(BlockNames.of(ip), k -> new ArrayList<>()).add(ip));
    Set<Ip> released = new java.util.HashSet<>();
    for (var e : byBlock.entrySet()) {
      List<Ip> ips = e.getValue();
      try {
        released.addAll(cas(e.getKey(), BlockNames.cidr(ips.get(0)), entries -> {
          Map<String, IPBlockEntry> next = new TreeMap<>(entries);
          List<Ip> gone = new ArrayList<>();
          boolean changed = false;
          for (Ip ip : ips) {
            IPBlockEntry held = next.get(ip.toString());
            if (held == null) {
              gone.add(ip);
            } else if (held.owner().sameAs(owners.get(ip))) {
              next.remove(ip.toString());
              gone.add(ip);
              changed = true;
            }
          }
          return new Mutation<>(changed ? next : null, gone);
        }, false));
      } catch (ContendedException | KubernetesClientException x) {
        LOG.warn("releasing {} address(es) in IPBlock {} failed: {}", ips.size(), e.getKey(), x.getMessage());
      }
    }
    return released;
  }

  /** Releases one address if this owner holds it. */
  public boolean release(Ip ip, ClaimOwner owner) {
    return releaseAll(Map.of(ip, owner)).contains(ip);
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

  /** Every entry of a pool, address to entry, straight from the API server. */
  public Map<Ip, IPBlockEntry> entriesOfPool(String pool) {
    Map<Ip, IPBlockEntry> out = new TreeMap<>();
    for (IPBlock b : all()) {
      b.entries().forEach((address, entry) -> {
        if (pool.equals(entry.pool())) {
          try {
            out.put(Ip.parse(address), entry);
          } catch (RuntimeException e) {
            LOG.warn("IPBlock {} has an entry '{}' that is not an address; ignored", b.getMetadata().getName(), address);
          }
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
          // The last entry released: the block goes, unless it changed since it was read.
          blocks().withName(name).lockResourceVersion(current.getMetadata().getResourceVersion()).delete();
          current.setSpec(new IPBlockSpec(current.getSpec() == null ? cidr : current.getSpec().cidr(), Map.of()));
          written.accept(current);
          return m.result();
        }
        if (current == null) {
          answer = blocks().resource(IPBlock.of(name, cidr, m.entries())).create();
        } else {
          current.setSpec(new IPBlockSpec(current.getSpec() == null || current.getSpec().cidr() == null
              ? cidr : current.getSpec().cidr(), m.entries()));
          answer = blocks().resource(current).update(); // PUT with the resourceVersion read: 409 when stale
        }
        written.accept(answer);
        return m.result();
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
