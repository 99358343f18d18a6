package org.ipamoperators.keepalived;

import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.ipamoperators.keepalived.api.KeepalivedGroup;
import org.ipamoperators.keepalived.config.Verbatim;

/**
 * What the operator's settings allow a KeepalivedGroup, checked before anything is claimed or applied: its pods run
 * as root with the host network, so the namespace it lives in, the image it names and group-level verbatim keys
 * that run programs are the cluster admin's decision, not the group author's.
 */
final class GroupPolicy {
  static final String REASON = "NotAllowed";

  private GroupPolicy() {}

  /** Why the group is refused, or empty when the settings allow it. */
  static Optional<String> refusal(KeepalivedGroup group, KeepalivedSettings settings) {
    String namespace = group.getMetadata().getNamespace();
    if (!settings.namespaceAllowed(namespace)) {
      return Optional.of("the operator serves KeepalivedGroups only in namespaces "
          + new TreeSet<>(settings.allowedNamespaces()) + " (--keepalived-allowed-namespaces), not in " + namespace
          + ": nothing is created for this group");
    }
    if (group.getSpec() == null) {
      return Optional.empty();
    }
    String image = group.getSpec().image();
    if (!settings.imageAllowed(image)) {
      return Optional.of("image " + image.trim() + " is not allowed by the operator (--keepalived-allowed-images;"
          + " allowed: " + settings.keepalivedImage()
          + (settings.allowedImages().isEmpty() ? "" : ", " + String.join(", ", settings.allowedImages()))
          + "): its containers would run as root on the nodes' network");
    }
    Map<String, String> verbatim = group.getSpec().verbatimConfig();
    if (!settings.allowGroupPrograms() && verbatim != null) {
      var programs = Verbatim.programKeys(verbatim);
      programs.removeAll(Verbatim.MANAGED_GLOBAL_KEYS); // refused later, as managed
      if (!programs.isEmpty()) {
        return Optional.of("verbatimConfig refused: " + programs + " run programs as root on the nodes; the"
            + " operator allows that only with --keepalived-allow-group-programs");
      }
    }
    return Optional.empty();
  }
}
