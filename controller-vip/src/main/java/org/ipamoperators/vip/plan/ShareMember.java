package org.ipamoperators.vip.plan;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * A Service using a shared address, as recorded on the shared claim: {@code namespace/name}, its
 * uid (for audit), its ports as {@code PROTOCOL/port} and its backend key (empty for
 * {@code externalTrafficPolicy: Cluster}, the pod selector for {@code Local}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ShareMember(String service, String uid, List<String> ports, String backend) {
  public ShareMember {
    ports = ports == null ? List.of() : List.copyOf(ports);
    backend = backend == null ? "" : backend;
  }

  /** Same Service and the same ports and backend: nothing to record again. */
  public boolean sameEntry(ShareMember other) {
    return other != null && service.equals(other.service) && ports.equals(other.ports) && backend.equals(other.backend);
  }
}
