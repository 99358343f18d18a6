package org.ipamoperators.egressip.plan;

/**
 * An opted-in namespace as the planner sees it: its name and uid, the raw value of its {@code
 * egressips} annotation (null when absent) and the addresses this operator last published there
 * (the {@code egressips-published} annotation, null when it never published any): with it, a
 * removed {@code egressips} is told apart from a restart between claim and publication without a
 * write on the claims.
 */
public record NamespaceState(String name, String uid, String egressIps, String published) {
  public NamespaceState(String name, String uid, String egressIps) {
    this(name, uid, egressIps, null);
  }
}
