package org.ipamoperators.egressip.plan;

/** Why one namespace is not served, in words for a Warning Event on that namespace. */
public record NamespaceProblem(String namespace, Reason reason, String message) {
  public enum Reason {
    /** The egressips annotation cannot be used as written. */
    INVALID_ANNOTATION,
    /** An address in the annotation is held by someone else. */
    ADDRESS_TAKEN,
    /** A CIDR has no free address left. */
    CIDR_EXHAUSTED
  }

  /** Rejected namespaces need the user; pending ones resolve themselves when addresses free up. */
  public boolean rejected() {
    return reason != Reason.CIDR_EXHAUSTED;
  }
}
