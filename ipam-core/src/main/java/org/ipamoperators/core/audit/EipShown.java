package org.ipamoperators.core.audit;

import java.util.Objects;

/**
 * An Eip object as the cluster shows it.
 *
 * @param owner the Eip, named as the ledgers name owners ({@code eip/Eip/<namespace>/<name>})
 * @param allocationId the allocation its status names, or null when it has none yet
 * @param networkInterface the ENI its status says the address is associated with, or null
 * @param privateIp the private address its status says the address is associated with, or null
 * @param where the object and field, for messages
 */
public record EipShown(String owner, String allocationId, String networkInterface, String privateIp, String where) {
  /** Validates the required parts. */
  public EipShown {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(where, "where");
  }
}
