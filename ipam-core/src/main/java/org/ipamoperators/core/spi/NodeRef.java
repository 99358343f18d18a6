package org.ipamoperators.core.spi;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.ipamoperators.core.address.Ip;

/**
 * What a cloud module needs to know of a Kubernetes node: its name, {@code spec.providerID} (for
 * example {@code aws:///us-east-1a/i-0abc}; may be null on bare metal), labels and the addresses
 * from its status.
 *
 * @param name the node's name
 * @param providerId {@code spec.providerID}, or null
 * @param labels the node's labels
 * @param addresses the node's addresses from its status, primary first
 */
public record NodeRef(String name, String providerId, Map<String, String> labels, List<Ip> addresses) {
  /**
   * Copies the collections.
   *
   * @param name the node's name
   * @param providerId {@code spec.providerID}, or null
   * @param labels the node's labels
   * @param addresses the node's addresses
   */
  public NodeRef {
    Objects.requireNonNull(name, "name");
    labels = Map.copyOf(labels);
    addresses = List.copyOf(addresses);
  }
}
