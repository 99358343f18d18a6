package org.ipamoperators.controller.common.ledger;

/**
 * The one retry rule of both ledgers: a create answered 409 whose claim is then gone (released
 * between the create and the read) is tried again, at most {@link #MAX} times in all; after that
 * the claim is contended and the caller's reconcile is retried later, never recursion without bound.
 */
public final class ClaimAttempts {
  /** Create attempts per claim before giving up. */
  public static final int MAX = 5;

  private ClaimAttempts() {}

  /** Thrown after {@link #MAX} attempts that each found the claim gone after a 409. */
  public static final class ContendedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public ContendedException(String name) {
      super(name + " was created and deleted by others " + MAX + " times while being claimed; will retry");
    }
  }
}
