package org.ipamoperators.core.audit;

import java.util.Objects;

/**
 * An address found on a node's cloud interface and marked there as attached by this suite (on EC2
 * listed in the ENI's ownership tags, on Azure an ipConfiguration of the suite's name): the cloud's
 * side of an egress address. Addresses other tools put on the interface are not attachments.
 *
 * @param resource the address
 * @param node the node whose interface holds it
 * @param where the interface, for messages (for example "ENI eni-1 of node a1")
 */
public record Attachment(Resource resource, String node, String where) {
  /** Validates the required parts. */
  public Attachment {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(where, "where");
  }
}
