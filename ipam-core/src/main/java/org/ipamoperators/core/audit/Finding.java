package org.ipamoperators.core.audit;

import java.util.List;
import java.util.Objects;

/**
 * One problem found by the audit.
 *
 * @param kind what is wrong
 * @param resource the resource concerned
 * @param parties the owners and holders involved, sorted
 * @param message what a person needs to read: who, where, and what to do
 */
public record Finding(FindingKind kind, Resource resource, List<String> parties, String message) {
  /** Copies the parties and validates the required parts. */
  public Finding {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(resource, "resource");
    parties = List.copyOf(parties);
    Objects.requireNonNull(message, "message");
  }
}
