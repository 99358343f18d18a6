package org.ipamoperators.keepalived;

import io.fabric8.kubernetes.api.model.ConfigMap;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.ipamoperators.core.address.Ip;
import org.ipamoperators.keepalived.api.KeepalivedAnnotations;
import org.ipamoperators.keepalived.config.VipHandover;

/**
 * What the groups' ConfigMaps render, as {@link VipHandover} needs it: the VIPs of every other group's
 * configuration, and this group's own. Each ConfigMap is parsed once per version it is seen in.
 */
final class RenderedElsewhere {
  private record Parsed(String version, Set<Ip> vips) {}

  private final Map<String, Parsed> byUid = new ConcurrentHashMap<>();

  /** What one group sees: every VIP other groups render (with the group), and what its own ConfigMap renders. */
  record View(Map<Ip, VipHandover.Holder> elsewhere, VipHandover.Holder here, Set<Ip> renderedHere) {}

  View view(List<ConfigMap> groupConfigMaps, String namespace, String name) {
    Map<Ip, VipHandover.Holder> elsewhere = new HashMap<>();
    VipHandover.Holder here = new VipHandover.Holder(namespace + "/" + name, Instant.now());
    Set<Ip> renderedHere = Set.of();
    Set<String> seen = new HashSet<>();
    for (ConfigMap cm : groupConfigMaps) {
      String group = cm.getMetadata().getLabels() == null ? null
          : cm.getMetadata().getLabels().get(KeepalivedAnnotations.GROUP_LABEL);
      if (group == null || !group.equals(cm.getMetadata().getName())) {
        continue; // not a group's configuration
      }
      seen.add(cm.getMetadata().getUid());
      VipHandover.Holder holder = new VipHandover.Holder(cm.getMetadata().getNamespace() + "/" + group,
          cm.getMetadata().getCreationTimestamp() == null ? Instant.now()
              : Instant.parse(cm.getMetadata().getCreationTimestamp()));
      Set<Ip> vips = vips(cm);
      if (cm.getMetadata().getNamespace().equals(namespace) && group.equals(name)) {
        here = holder;
        renderedHere = vips;
      } else {
        vips.forEach(v -> elsewhere.merge(v, holder, (a, b) -> a.since().isBefore(b.since()) ? a : b));
      }
    }
    byUid.keySet().retainAll(seen);
    return new View(elsewhere, here, renderedHere);
  }

  private Set<Ip> vips(ConfigMap cm) {
    String version = cm.getMetadata().getResourceVersion();
    Parsed p = byUid.get(cm.getMetadata().getUid());
    if (p == null || !p.version().equals(version)) {
      p = new Parsed(version == null ? "" : version, VipHandover.rendered(cm.getData()));
      byUid.put(cm.getMetadata().getUid(), p);
    }
    return p.vips();
  }
}
