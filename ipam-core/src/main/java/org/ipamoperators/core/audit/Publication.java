package org.ipamoperators.core.audit;

import java.util.Objects;

/**
 * One place where the cluster or a cloud shows a resource in use: a namespace annotation, a
 * HostSubnet or EgressIP, a Service's ingress, a keepalived group's router id, a tagged EIP.
 *
 * @param resource what is shown
 * @param holder whom it serves, in the same words the ledger uses for owners (a shared VIP names its
 *     sharing key, so several Services showing it are one holder)
 * @param where the object and field that shows it, for messages
 */
public record Publication(Resource resource, String holder, String where) {
  /** Validates the required parts. */
  public Publication {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(where, "where");
  }
}
