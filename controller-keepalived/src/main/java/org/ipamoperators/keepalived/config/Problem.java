package org.ipamoperators.keepalived.config;

import java.util.Collections;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Why (part of) a service is not announced, or what was left out of it: for a Warning Event on each service
 * concerned. Problems touch only their services; everything else is still rendered.
 *
 * @param kind what went wrong
 * @param services the services concerned
 * @param message for people
 */
public record Problem(Kind kind, SortedSet<ServiceRef> services, String message) {

  /** The kinds of problems. */
  public enum Kind {
    /** The service has no VIP yet (a LoadBalancer whose status has no IP): nothing rendered, no router id used. */
    NO_VIP,
    /** The VIP is already announced for another service (the first in namespace/name order keeps it). */
    DUPLICATE_VIP,
    /** Some verbatim lines of the service were refused; the others are rendered. */
    VERBATIM_REFUSED,
    /** No router id for the instance (none free, or not allocated yet): its VIPs are not announced. */
    NO_ROUTER_ID,
    /** The router id given for the instance is already used by another instance of the group. */
    ROUTER_ID_CONFLICT
  }

  public Problem {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(message, "message");
    services = Collections.unmodifiableSortedSet(new TreeSet<>(services));
  }

  @Override
  public String toString() {
    return kind + " " + services + ": " + message;
  }
}
