package org.ipamoperators.vip.plan;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * MetalLB's rule for Services sharing one address under the same key: no protocol and port used by
 * two of them, and either all use {@code externalTrafficPolicy: Cluster} or those using
 * {@code Local} select the same pods (otherwise one address would need two different sets of
 * nodes).
 */
public final class Sharing {
  private Sharing() {}

  /** Why {@code joining} cannot share with {@code members} (its own entry ignored), or empty when it can. */
  public static Optional<String> conflict(ShareMember joining, List<ShareMember> members) {
    List<String> why = new ArrayList<>();
    for (ShareMember m : members) {
      if (m.service().equals(joining.service())) {
        continue;
      }
      List<String> both = joining.ports().stream().filter(m.ports()::contains).toList();
      if (!both.isEmpty()) {
        why.add(String.join(", ", both) + " already used by " + m.service());
      }
      if (!m.backend().equals(joining.backend())) {
        why.add(m.service() + " has " + describe(m.backend()) + " but this Service has " + describe(joining.backend())
            + " (externalTrafficPolicy Local needs the same pod selector on every sharing Service)");
      }
    }
    return why.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", why));
  }

  private static String describe(String backend) {
    return backend.isEmpty() ? "externalTrafficPolicy Cluster" : "externalTrafficPolicy Local with selector {" + backend + "}";
  }
}
