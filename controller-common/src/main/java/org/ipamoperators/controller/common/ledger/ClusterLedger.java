package org.ipamoperators.controller.common.ledger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.core.ledger.Claim;

/**
 * The suite's shared record of who holds which address, kept in the cluster as one {@link IPClaim}
 * per address. Creating the object is the lock, so no address can be given to two owners, even by
 * two replicas with stale caches. Reads for planning may come from an informer cache; the create
 * here always goes to the API server. Addresses may also be held by entries of {@link IPBlock}s
 * ({@link BlockLedger}): a claim created here is checked against the address's block afterwards and
 * withdrawn when an entry exists, so an address is never held in both. A claim that already stands
 * is checked again on every claim of it: a process killed between its create and its check leaves
 * the address in both ledgers, and {@link SplitHold} decides which record keeps it.
 *
 * <p>Every delete is conditioned on the uid and resourceVersion read ({@link ConditionedDelete}).
 * Readers skip claims they cannot read ({@link Malformed}) and list them for reporting
 * ({@link #malformedClaimsOfPool}); the address of such a claim counts as held by someone else.
 */
public final class ClusterLedger {
  public static final String LABEL_CONTROLLER = "ipam.ipamoperators.org/controller";
  public static final String LABEL_POOL = "ipam.ipamoperators.org/pool";
  /**
   * The IPBlock the claimed address falls in ({@link BlockNames#of}), so the block writer's check can
   * read the claims of the blocks it touched instead of every claim.
   */
  public static final String LABEL_BLOCK = "ipam.ipamoperators.org/block";

  private final KubernetesClient client;

  public ClusterLedger(KubernetesClient client) {
    this.client = client;
  }

  private NonNamespaceOperation<IPClaim, KubernetesResourceList<IPClaim>, Resource<IPClaim>> claims() {
    return client.resources(IPClaim.class);
  }

  /**
   * Claims an address for an owner. Idempotent: claiming what the owner already holds succeeds,
   * once the block ledger has been read again ({@link SplitHold}: an entry of another holder made
   * first takes the address, and this claim is withdrawn). Never overwrites another owner's claim.
   * An address whose claim no reader can use ({@link Malformed}) is {@code HELD_BY_OTHER}.
   */
  public ClaimResult claim(Ip ip, String pool, ClaimOwner owner) {
    return claim(ip, pool, owner, Map.of());
  }

  /**
   * Claims with extra labels on the claim object (for example how the address was chosen). A 409
   * whose claim is gone when read is tried again, at most {@link ClaimAttempts#MAX} times.
   *
   * @throws ClaimAttempts.ContendedException when every attempt found the claim gone after a 409
   */
  public ClaimResult claim(Ip ip, String pool, ClaimOwner owner, Map<String, String> labels) {
    String name = ClaimNames.of(ip);
    Map<String, String> all = new java.util.TreeMap<>(labels);
    all.putAll(labels(ip, pool, owner));
    for (int attempt = 0; attempt < ClaimAttempts.MAX; attempt++) {
      IPClaim wanted = IPClaim.of(name, new IPClaimSpec(ip.toString(), pool, owner), all);
      IPClaim created;
      try {
        created = claims().resource(wanted).create();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
        created = null;
      }
      if (created != null) {
        // Callers keep the answer (a ClaimIndex holds it until the claim goes): without managedFields, which
        // nothing reads and which is most of a claim's heap.
        created.getMetadata().setManagedFields(null);
        return checkBlock(ip, owner, created);
      }
      IPClaim existing = claims().withName(name).get();
      if (existing == null) {
        continue; // released between our create and get: try again rather than report a false holder
      }
      ClaimOwner holder = Malformed.ownerOf(existing);
      if (Malformed.problem(existing) != null || !holder.sameAs(owner)) {
        return new ClaimResult(ClaimResult.Outcome.HELD_BY_OTHER, holder, existing);
      }
      return recheckBlock(ip, existing);
    }
    throw new ClaimAttempts.ContendedException("IPClaim " + name);
  }

  /** The labels every claim carries: its controller, its pool and the IPBlock its address falls in. */
  public static Map<String, String> labels(Ip ip, String pool, ClaimOwner owner) {
    return Map.of(LABEL_CONTROLLER, ClaimNames.labelValue(owner.controller()),
        LABEL_POOL, ClaimNames.labelValue(pool),
        LABEL_BLOCK, BlockNames.of(ip));
  }

  /**
   * The claimer's side of the two-sided check with the block ledger ({@link BlockLedger}): after
   * the create, the address's IPBlock is read from the API server; when it has an entry for the
   * address, the block writer may not have seen this claim, so this claim is deleted and the address
   * counts as taken. A failed read deletes the claim too (an unchecked claim must not stand) and
   * the error propagates, so the caller retries. Public for callers that create claims of their own
   * shape (shared addresses); every created claim must pass through it.
   */
  public ClaimResult checkBlock(Ip ip, ClaimOwner owner, IPClaim created) {
    IPBlockEntry entry;
    try {
      entry = entryOf(ip);
    } catch (KubernetesClientException e) {
      ConditionedDelete.delete(client, created);
      throw e;
    }
    if (entry == null) {
      return new ClaimResult(ClaimResult.Outcome.CLAIMED, owner, created);
    }
    ConditionedDelete.delete(client, created);
    String pool = created.getSpec() == null ? null : created.getSpec().pool();
    return new ClaimResult(SplitHold.sameHolder(entry.owner(), entry.pool(), owner, pool)
        ? ClaimResult.Outcome.ALREADY_OURS : ClaimResult.Outcome.HELD_BY_OTHER, entryHolder(ip, entry), null);
  }

  /**
   * The check of a claim that already stands for the owner asking (an idempotent claim). A process
   * killed after its create and before its check, or a block writer killed after its write and
   * before its check, may have left an entry of another holder for the address; then
   * {@link SplitHold} decides. When the entry keeps the address, this claim is deleted (conditioned
   * on the claim read; a claim changed meanwhile stays and is checked again at the next claim) and
   * the address is the entry's holder's either way. A failed read of the block propagates: the
   * claim is not reported as ours unchecked.
   */
  private ClaimResult recheckBlock(Ip ip, IPClaim existing) {
    ClaimOwner holder = existing.getSpec().owner();
    IPBlockEntry entry = entryOf(ip);
    if (entry == null || SplitHold.sameHolder(entry.owner(), entry.pool(), holder, existing.getSpec().pool())
        || SplitHold.winner(existing, entry) == SplitHold.Winner.CLAIM) {
      return new ClaimResult(ClaimResult.Outcome.ALREADY_OURS, holder, existing);
    }
    ConditionedDelete.delete(client, existing);
    return new ClaimResult(ClaimResult.Outcome.HELD_BY_OTHER, entryHolder(ip, entry), null);
  }

  /** The block entry of an address from the API server; null when none, or no block ledger in this cluster. */
  private IPBlockEntry entryOf(Ip ip) {
    try {
      IPBlock block = client.resources(IPBlock.class).withName(BlockNames.of(ip)).get();
      return block == null ? null : block.entries().get(ip.toString());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return null; // no IPBlock resource in this cluster
      }
      throw e;
    }
  }

  private static ClaimOwner entryHolder(Ip ip, IPBlockEntry entry) {
    return entry.owner() != null ? entry.owner() : Malformed.holder("IPBlock", BlockNames.of(ip));
  }

  /**
   * Releases an address if, and only if, this owner holds it: the delete carries the resourceVersion
   * of the claim just read as a precondition, so a claim re-created (by anyone) or changed meanwhile
   * is never removed.
   */
  public boolean release(Ip ip, ClaimOwner owner) {
    return releaseClaim(ip, owner).isPresent();
  }

  /** {@link #release}, returning the claim deleted (for callers that keep an index of claims). */
  public Optional<IPClaim> releaseClaim(Ip ip, ClaimOwner owner) {
    IPClaim existing = claims().withName(ClaimNames.of(ip)).get();
    if (existing == null || Malformed.problem(existing) != null || !existing.getSpec().owner().sameAs(owner)) {
      return Optional.empty();
    }
    return ConditionedDelete.delete(client, existing) ? Optional.of(existing) : Optional.empty();
  }

  /**
   * Deletes exactly this claim, as it was read: only if it still has this uid and resourceVersion.
   * For callers that hold the claim object (an index, an informer): a claim deleted and created
   * again by another owner, or changed since, stays. True when this call deleted it.
   */
  public boolean releaseIfUnchanged(IPClaim seen) {
    return ConditionedDelete.delete(client, seen);
  }

  /** Sets a label on a claim (labels are not part of the immutable spec). */
  public void label(Ip ip, String key, String value) {
    claims().withName(ClaimNames.of(ip)).edit(c -> {
      if (c.getMetadata().getLabels() == null) {
        c.getMetadata().setLabels(new java.util.TreeMap<>());
      }
      c.getMetadata().getLabels().put(key, value);
      return c;
    });
  }

  /** The claim on an address, if any. */
  public Optional<IPClaim> get(Ip ip) {
    return Optional.ofNullable(claims().withName(ClaimNames.of(ip)).get());
  }

  /**
   * Every well-formed claim of a pool, straight from the API server. Claims labelled with the pool
   * that cannot be read are left out; {@link #malformedClaimsOfPool} lists them.
   */
  public List<IPClaim> claimsOfPool(String pool) {
    return claims().withLabel(LABEL_POOL, ClaimNames.labelValue(pool)).list().getItems().stream()
        .filter(c -> Malformed.problem(c) == null && pool.equals(c.getSpec().pool())).toList();
  }

  /**
   * The claims labelled with a pool that no reader can use (no spec, owner, pool or address;
   * {@link Malformed#problem(IPClaim)} says which), for the caller to report. Their addresses, where
   * named, stay taken: {@link #claim} answers {@code HELD_BY_OTHER} for them.
   */
  public List<IPClaim> malformedClaimsOfPool(String pool) {
    return claims().withLabel(LABEL_POOL, ClaimNames.labelValue(pool)).list().getItems().stream()
        .filter(c -> Malformed.problem(c) != null).toList();
  }

  /** Every claim in the cluster, whoever made it, malformed ones included ({@link Malformed#problem(IPClaim)}). */
  public List<IPClaim> all() {
    return claims().list().getItems();
  }

  /** A claim object as ipam-core's ledger sees it: address, owner key, creation time. */
  public static Claim toCoreClaim(IPClaim c, String ownerKey) {
    String created = c.getMetadata().getCreationTimestamp();
    return new Claim(Ip.parse(c.getSpec().address()), ownerKey, created == null ? null : Instant.parse(created));
  }
}
