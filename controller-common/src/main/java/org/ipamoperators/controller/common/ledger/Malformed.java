package org.ipamoperators.controller.common.ledger;

import org.ipamoperators.core.address.Ip;

/**
 * Ledger records a reader cannot use: an IPClaim without a spec, owner or pool, or whose address
 * does not parse (the CRD does not require {@code spec}); an IPBlock entry without an owner or pool,
 * or under a key that is not an address. Readers skip them instead of failing, list them for callers
 * to report ({@link ClusterLedger#malformedClaimsOfPool}, {@link BlockLedger#malformedEntries}), and
 * treat the address such a record names as held by someone else ({@link #holder}), never as free:
 * a record that cannot be read is not proof that nobody holds the address.
 */
public final class Malformed {
  /** The controller name of {@link #holder}: never a real controller's (not a valid label value). */
  public static final String CONTROLLER = "(malformed)";

  private Malformed() {}

  /** A stand-in holder for a malformed record, for answers and messages ({@code kind} "IPClaim" or "IPBlock"). */
  public static ClaimOwner holder(String kind, String name) {
    return new ClaimOwner(CONTROLLER, kind, null, name == null ? "" : name, null);
  }

  /** What is wrong with a claim, or null when it is well formed. */
  public static String problem(IPClaim c) {
    if (c.getSpec() == null) {
      return "has no spec";
    }
    if (c.getSpec().owner() == null) {
      return "has no spec.owner";
    }
    if (c.getSpec().pool() == null) {
      return "has no spec.pool";
    }
    if (!parses(c.getSpec().address())) {
      return "has no valid spec.address";
    }
    return null;
  }

  /** What is wrong with a block entry under {@code key}, or null when it is well formed. */
  public static String problem(String key, IPBlockEntry e) {
    if (!parses(key)) {
      return "key '" + key + "' is not an address";
    }
    if (e == null || e.owner() == null) {
      return "entry " + key + " has no owner";
    }
    if (e.pool() == null) {
      return "entry " + key + " has no pool";
    }
    return null;
  }

  /** The owner of a claim, or the stand-in holder when the claim is malformed. */
  public static ClaimOwner ownerOf(IPClaim c) {
    return problem(c) == null ? c.getSpec().owner() : holder("IPClaim", c.getMetadata().getName());
  }

  private static boolean parses(String address) {
    if (address == null) {
      return false;
    }
    try {
      Ip.parse(address);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }
}
