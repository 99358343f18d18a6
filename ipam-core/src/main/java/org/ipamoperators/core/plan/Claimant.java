package org.ipamoperators.core.plan;

import java.util.List;
import java.util.Objects;

/** Someone who wants one address from each of the named pools, such as an opted-in namespace. */
public record Claimant(String name, List<String> pools) {
  public Claimant {
    Objects.requireNonNull(name, "name");
    pools = List.copyOf(pools);
  }
}
