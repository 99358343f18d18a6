package org.ipamoperators.core.plan;

import java.util.List;
import java.util.Objects;

/** Someone who wants one address from each of the named pools, such as an opted-in namespace. */
public record Claimant(String name, List<String> pools) {
  /**
   * Copies the pool names.
   *
   * @param name the claimant, such as a namespace
   * @param pools the pools it wants one address from each
   */
  public Claimant {
    Objects.requireNonNull(name, "name");
    pools = List.copyOf(pools);
  }
}
