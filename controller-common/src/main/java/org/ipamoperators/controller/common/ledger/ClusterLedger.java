package org.ipamoperators.controller.common.ledger;

import io.fabric8.kubernetes.api.model.StatusDetails;
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
 * withdrawn when an entry exists, so an address is never held in both.
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
   * Claims an address for an owner. Idempotent: claiming what the owner already holds succeeds.
   * Never overwrites another owner's claim.
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
        return checkBlock(ip, owner, created);
      }
      IPClaim existing = claims().withName(name).get();
      if (existing == null) {
        continue; // released between our create and get: try again rather than report a false holder
      }
      ClaimOwner holder = existing.getSpec().owner();
      return new ClaimResult(holder.sameAs(owner) ? ClaimResult.Outcome.ALREADY_OURS
          : ClaimResult.Outcome.HELD_BY_OTHER, holder, existing);
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
      IPBlock block = client.resources(IPBlock.class).withName(BlockNames.of(ip)).get();
      entry = block == null ? null : block.entries().get(ip.toString());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return new ClaimResult(ClaimResult.Outcome.CLAIMED, owner, created); // no block ledger in this cluster
      }
      withdraw(created);
      throw e;
    }
    if (entry == null) {
      return new ClaimResult(ClaimResult.Outcome.CLAIMED, owner, created);
    }
    withdraw(created);
    return new ClaimResult(entry.owner().sameAs(owner) ? ClaimResult.Outcome.ALREADY_OURS
        : ClaimResult.Outcome.HELD_BY_OTHER, entry.owner(), null);
  }

  private void withdraw(IPClaim created) {
    try {
      claims().withName(created.getMetadata().getName())
          .lockResourceVersion(created.getMetadata().getResourceVersion()).delete();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404 && e.getCode() != 409) {
        throw e;
      }
    }
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
    if (existing == null || existing.getSpec() == null || !existing.getSpec().owner().sameAs(owner)) {
      return Optional.empty();
    }
    try {
      List<StatusDetails> deleted = claims().withName(ClaimNames.of(ip))
          .lockResourceVersion(existing.getMetadata().getResourceVersion())
          .delete();
      return deleted.isEmpty() ? Optional.empty() : Optional.of(existing);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 || e.getCode() == 404) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /** Sets a label on a claim (labels are not part of the immutable spec). */
  public void label(Ip ip, String key, String value) {
    claims().withName(ClaimNames.of(ip)).edit(c -> {
      c.getMetadata().getLabels().put(key, value);
      return c;
    });
  }

  /** The claim on an address, if any. */
  public Optional<IPClaim> get(Ip ip) {
    return Optional.ofNullable(claims().withName(ClaimNames.of(ip)).get());
  }

  /** Every claim of a pool, straight from the API server. */
  public List<IPClaim> claimsOfPool(String pool) {
    return claims().withLabel(LABEL_POOL, ClaimNames.labelValue(pool)).list().getItems().stream()
        .filter(c -> pool.equals(c.getSpec().pool())).toList();
  }

  /** Every claim in the cluster, whoever made it. */
  public List<IPClaim> all() {
    return claims().list().getItems();
  }

  /** A claim object as ipam-core's ledger sees it: address, owner key, creation time. */
  public static Claim toCoreClaim(IPClaim c, String ownerKey) {
    String created = c.getMetadata().getCreationTimestamp();
    return new Claim(Ip.parse(c.getSpec().address()), ownerKey, created == null ? null : Instant.parse(created));
  }
}
