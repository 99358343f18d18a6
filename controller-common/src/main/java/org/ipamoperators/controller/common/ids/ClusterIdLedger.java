package org.ipamoperators.controller.common.ids;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import org.ipamoperators.controller.common.ledger.ClaimAttempts;
import org.ipamoperators.controller.common.ledger.ClaimNames;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.ClusterLedger;
import org.ipamoperators.controller.common.ledger.ConditionedDelete;
import org.ipamoperators.controller.common.ledger.Malformed;

/**
 * The shared ledger of numbers, next to {@link ClusterLedger} for addresses: one {@link IDClaim} per number of an
 * {@link IdSpace}, named {@code <space>.<id>}. Creating the claim is the lock, so a number is never given to two
 * owners, even by two replicas with stale caches; a release is guarded by the claim's uid and resourceVersion
 * ({@link ConditionedDelete}), so a claim re-created by someone else meanwhile is never removed. Claims no reader
 * can use (no spec: the CRD allows it) are skipped, listed ({@link #malformedClaimsOf}) and keep their number taken.
 */
public final class ClusterIdLedger {
  public static final String LABEL_SPACE = "ipam.ipamoperators.org/id-space";
  /** The owner's {@code kind.namespace.name} as a label value, to find an owner's claims in every space. */
  public static final String LABEL_OWNER = "ipam.ipamoperators.org/owner";
  /**
   * Set (epoch seconds) on a claim its owner no longer uses but does not give up yet: the number stays taken for a
   * grace period, so it is not handed to a new user while old users may still act on it (for example nodes that
   * have not yet loaded a configuration without it).
   */
  public static final String LABEL_RETIRED_AT = "ipam.ipamoperators.org/retired-at";

  private final KubernetesClient client;

  public ClusterIdLedger(KubernetesClient client) {
    this.client = client;
  }

  private NonNamespaceOperation<IDClaim, KubernetesResourceList<IDClaim>, Resource<IDClaim>> claims() {
    return client.resources(IDClaim.class);
  }

  /** The label value identifying an owner's claims (its controller, kind, namespace and name). */
  public static String ownerLabel(ClaimOwner owner) {
    return ClaimNames.labelValue(owner.controller() + "." + owner.kind() + "."
        + (owner.namespace() == null ? "" : owner.namespace()) + "." + owner.name());
  }

  /**
   * Claims number {@code id} of {@code space} for {@code purpose}. Idempotent: claiming what the owner already holds
   * for the same purpose succeeds. A number the same owner holds for another purpose is {@code HELD_BY_OTHER}: one
   * number serves one purpose.
   */
  public IdClaimResult claim(IdSpace space, int id, String purpose, ClaimOwner owner) {
    String name = space.claimName(id);
    Map<String, String> labels = new TreeMap<>();
    labels.put(ClusterLedger.LABEL_CONTROLLER, ClaimNames.labelValue(owner.controller()));
    labels.put(LABEL_SPACE, space.name());
    labels.put(LABEL_OWNER, ownerLabel(owner));
    for (int attempt = 0; attempt < ClaimAttempts.MAX; attempt++) {
      try {
        claims().resource(IDClaim.of(name, new IDClaimSpec(space.name(), id, purpose, owner), labels)).create();
        return new IdClaimResult(IdClaimResult.Outcome.CLAIMED, OptionalInt.of(id), owner);
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
      }
      IDClaim existing = claims().withName(name).get();
      if (existing == null) {
        continue; // released between our create and get: try again rather than report a false holder
      }
      ClaimOwner holder = holderOf(existing);
      boolean ours = malformed(existing) == null && holder.sameAs(owner) && purpose.equals(existing.getSpec().purpose());
      return new IdClaimResult(ours ? IdClaimResult.Outcome.ALREADY_OURS : IdClaimResult.Outcome.HELD_BY_OTHER,
          OptionalInt.of(id), holder);
    }
    throw new ClaimAttempts.ContendedException("IDClaim " + name);
  }

  /**
   * Claims the lowest number of {@code space} that is not in {@code blacklist} and not taken, for {@code purpose};
   * if the owner already holds a number for it (not blacklisted), that one ({@code ALREADY_OURS}). The space is read
   * once from the API server to pass over the numbers taken; a number someone takes meanwhile is passed over when
   * its create fails, so correctness never depends on that read. {@code EXHAUSTED} when none is left.
   */
  public IdClaimResult claimFirstFree(IdSpace space, String purpose, ClaimOwner owner, Set<Integer> blacklist) {
    Set<Integer> skip = new java.util.HashSet<>(blacklist);
    for (IDClaim c : claimsOf(space)) {
      int id = c.getSpec().id();
      if (owner.sameAs(c.getSpec().owner()) && purpose.equals(c.getSpec().purpose()) && !blacklist.contains(id)) {
        return new IdClaimResult(IdClaimResult.Outcome.ALREADY_OURS, OptionalInt.of(id), c.getSpec().owner());
      }
      skip.add(id);
    }
    return claimLowestNotIn(space, purpose, owner, skip);
  }

  /**
   * Claims the lowest number of {@code space} not in {@code skip}, without reading the space first: for callers that
   * have just read it (and put what is taken in {@code skip}). A number taken meanwhile is passed over when its
   * create fails. {@code EXHAUSTED} when none is left.
   */
  public IdClaimResult claimLowestNotIn(IdSpace space, String purpose, ClaimOwner owner, Set<Integer> skip) {
    for (int id = space.min(); id <= space.max(); id++) {
      if (skip.contains(id)) {
        continue;
      }
      IdClaimResult r = claim(space, id, purpose, owner);
      if (r.ours()) {
        return r;
      }
    }
    return new IdClaimResult(IdClaimResult.Outcome.EXHAUSTED, OptionalInt.empty(), owner);
  }

  /** Releases number {@code id} of {@code space} if, and only if, {@code owner} holds it. */
  public boolean release(IdSpace space, int id, ClaimOwner owner) {
    return release(space.claimName(id), owner);
  }

  /** Releases a claim by object name if, and only if, {@code owner} holds it. */
  public boolean release(String claimName, ClaimOwner owner) {
    IDClaim existing = claims().withName(claimName).get();
    if (existing == null || existing.getSpec() == null || !owner.sameAs(existing.getSpec().owner())) {
      return false;
    }
    return ConditionedDelete.delete(client, existing);
  }

  /**
   * Deletes exactly this claim, as it was read: only if it still has this uid and resourceVersion,
   * so a claim deleted and created again by another owner, or changed since, stays.
   */
  public boolean releaseIfUnchanged(IDClaim seen) {
    return ConditionedDelete.delete(client, seen);
  }

  /** What is wrong with a claim no reader can use (no spec, or no owner, id or purpose), or null. */
  public static String malformed(IDClaim c) {
    if (c.getSpec() == null) {
      return "has no spec";
    }
    if (c.getSpec().owner() == null) {
      return "has no spec.owner";
    }
    if (c.getSpec().id() == null) {
      return "has no spec.id";
    }
    return c.getSpec().purpose() == null ? "has no spec.purpose" : null;
  }

  private static ClaimOwner holderOf(IDClaim c) {
    return malformed(c) == null ? c.getSpec().owner() : Malformed.holder("IDClaim", c.getMetadata().getName());
  }

  /**
   * The claims labelled with a space that no reader can use ({@link #malformed}), for the caller to
   * report. Their numbers stay taken: {@link #claim} answers {@code HELD_BY_OTHER} for them.
   */
  public List<IDClaim> malformedClaimsOf(IdSpace space) {
    return claims().withLabel(LABEL_SPACE, space.name()).list().getItems().stream()
        .filter(c -> malformed(c) != null).toList();
  }

  /**
   * Marks the owner's claim on {@code id} retired at {@code at} (or in use again with {@code at == null}). Guarded by
   * the claim's resourceVersion: false if the owner does not hold it or it changed meanwhile.
   */
  public boolean retire(IdSpace space, int id, ClaimOwner owner, java.time.Instant at) {
    IDClaim existing = claims().withName(space.claimName(id)).get();
    if (existing == null || existing.getSpec() == null || !owner.sameAs(existing.getSpec().owner())) {
      return false;
    }
    Map<String, String> labels = new TreeMap<>(existing.getMetadata().getLabels() == null ? Map.of()
        : existing.getMetadata().getLabels());
    if (at == null) {
      labels.remove(LABEL_RETIRED_AT);
    } else {
      labels.put(LABEL_RETIRED_AT, Long.toString(at.getEpochSecond()));
    }
    existing.getMetadata().setLabels(labels);
    try {
      claims().resource(existing).update(); // carries the resourceVersion read above
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 || e.getCode() == 404) {
        return false;
      }
      throw e;
    }
  }

  /** When the claim was retired, if it is. */
  public static Optional<java.time.Instant> retiredAt(IDClaim claim) {
    String v = claim.getMetadata().getLabels() == null ? null : claim.getMetadata().getLabels().get(LABEL_RETIRED_AT);
    if (v == null || !v.matches("[0-9]{1,19}")) {
      return Optional.empty();
    }
    return Optional.of(java.time.Instant.ofEpochSecond(Long.parseLong(v)));
  }

  /** The claim on number {@code id} of {@code space}, if any. */
  public Optional<IDClaim> get(IdSpace space, int id) {
    return Optional.ofNullable(claims().withName(space.claimName(id)).get());
  }

  /**
   * Every well-formed claim of a space, by number, straight from the API server (a malformed one
   * still takes its number: {@link #claimLowestNotIn} passes over it when its create fails).
   */
  public List<IDClaim> claimsOf(IdSpace space) {
    return claims().withLabel(LABEL_SPACE, space.name()).list().getItems().stream()
        .filter(c -> malformed(c) == null && space.name().equals(c.getSpec().space()))
        .sorted(Comparator.comparing(c -> c.getSpec().id()))
        .toList();
  }

  /** Every claim of an owner in every space, straight from the API server. */
  public List<IDClaim> claimsOf(ClaimOwner owner) {
    return claims().withLabel(LABEL_OWNER, ownerLabel(owner)).list().getItems().stream()
        .filter(c -> malformed(c) == null && owner.sameAs(c.getSpec().owner()))
        .sorted(Comparator.comparing((IDClaim c) -> c.getSpec().space()).thenComparing(c -> c.getSpec().id()))
        .toList();
  }
}
