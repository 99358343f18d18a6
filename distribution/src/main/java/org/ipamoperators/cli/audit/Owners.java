package org.ipamoperators.cli.audit;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Service;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.ipamoperators.controller.common.ledger.ClaimOwner;
import org.ipamoperators.controller.common.ledger.IPClaim;
import org.ipamoperators.eip.api.Eip;
import org.ipamoperators.keepalived.api.KeepalivedGroup;

/**
 * The objects that own claims, as the audit read them, and their names ({@code name} for namespaces,
 * {@code namespace/name} for the others), to tell whether a claim's owner still exists.
 */
record Owners(List<Namespace> namespaces, List<Service> services, List<KeepalivedGroup> groups, List<Eip> eips,
    Set<String> namespaceNames, Set<String> serviceNames, Set<String> groupNames, Set<String> eipNames) {

  static Owners of(List<Namespace> namespaces, List<Service> services, List<KeepalivedGroup> groups, List<Eip> eips) {
    Set<String> namespaceNames = new HashSet<>();
    namespaces.forEach(n -> namespaceNames.add(n.getMetadata().getName()));
    return new Owners(namespaces, services, groups, eips, namespaceNames, qualifiedNames(services),
        qualifiedNames(groups), qualifiedNames(eips));
  }

  private static Set<String> qualifiedNames(List<? extends HasMetadata> objects) {
    Set<String> names = new HashSet<>();
    objects.forEach(o -> names.add(o.getMetadata().getNamespace() + "/" + o.getMetadata().getName()));
    return names;
  }

  /** Whether the owner of a claim exists; unknown kinds always do, so that they are never repaired. */
  boolean exists(ClaimOwner o, HasMetadata claim) {
    return switch (o.kind()) {
      case "Namespace" -> namespaceNames.contains(o.name());
      case "Service" -> serviceNames.contains(o.namespace() + "/" + o.name());
      case "KeepalivedGroup" -> groupNames.contains(o.namespace() + "/" + o.name());
      // A sharing key lives while any Service listed on its claim exists.
      case "SharingKey" -> !(claim instanceof IPClaim ic) || claim.getMetadata().getAnnotations() == null
          || serviceNames.stream().anyMatch(s -> ClusterFacts.listsMember(ic, s));
      default -> true; // unknown kinds are never called gone, so never repaired
    };
  }

  /** Whether the Eip owning an IPClaim exists. */
  boolean eipExists(ClaimOwner o) {
    return eipNames.contains(o.namespace() + "/" + o.name());
  }
}
