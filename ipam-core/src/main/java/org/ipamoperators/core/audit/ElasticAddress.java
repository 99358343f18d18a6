package org.ipamoperators.core.audit;

import java.util.Objects;

/**
 * A VPC Elastic IP as EC2 shows it.
 *
 * @param allocationId its allocation
 * @param publicIp its public address
 * @param tagOwner the Eip its tags name for this cluster ({@code eip/Eip/<namespace>/<name>}), or null when it
 *     carries no tag of this cluster
 * @param networkInterface the ENI it is associated with, or null
 * @param privateIp the private address it is associated with, or null
 */
public record ElasticAddress(String allocationId, String publicIp, String tagOwner, String networkInterface,
    String privateIp) {
  /** Validates the required parts. */
  public ElasticAddress {
    Objects.requireNonNull(allocationId, "allocationId");
    Objects.requireNonNull(publicIp, "publicIp");
  }
}
