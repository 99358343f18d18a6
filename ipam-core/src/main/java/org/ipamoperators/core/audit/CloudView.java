package org.ipamoperators.core.audit;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the audit read of the clouds' interfaces, beside the ledgers and the cluster's publications.
 *
 * @param read whether the clouds were read at all; when false the other parts are empty and no
 *     cloud finding is made (a cluster-only audit)
 * @param attachments the addresses found on nodes' interfaces and marked as this suite's
 * @param placements the nodes the cluster network routes egress addresses through
 * @param described the nodes whose interfaces were read
 * @param unknown the nodes whose interfaces could not be read, with the reason: their addresses are
 *     neither confirmed nor reported missing
 */
public record CloudView(boolean read, List<Attachment> attachments, List<Placement> placements,
    Set<String> described, Map<String, String> unknown) {
  /** No cloud was read. */
  public static final CloudView NONE = new CloudView(false, List.of(), List.of(), Set.of(), Map.of());

  /** Copies the parts. */
  public CloudView {
    attachments = List.copyOf(attachments);
    placements = List.copyOf(placements);
    described = Set.copyOf(described);
    unknown = java.util.Collections.unmodifiableMap(new TreeMap<>(unknown));
  }

  /**
   * A view of clouds that were read.
   *
   * @param attachments the marked addresses found on interfaces
   * @param placements where the cluster network routes the egress addresses
   * @param described the nodes read
   * @param unknown the nodes that could not be read, with the reason
   * @return the view
   */
  public static CloudView of(List<Attachment> attachments, List<Placement> placements, Set<String> described,
      Map<String, String> unknown) {
    return new CloudView(true, attachments, placements, described, unknown);
  }
}
