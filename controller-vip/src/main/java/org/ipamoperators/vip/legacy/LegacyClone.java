package org.ipamoperators.vip.legacy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Preconditions;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.URLUtils;
import java.util.List;
import org.ipamoperators.controller.common.ledger.ConditionedDelete;

/** The old operator's keepalived clone of a VirtualIP's Service: telling it apart, and deleting exactly it. */
final class LegacyClone {
  private LegacyClone() {}

  /** Whether {@code svc} carries the owner reference the old operator put on the clone it made for {@code vip}. */
  static boolean isCloneOf(Service svc, HasMetadata vip) {
    List<OwnerReference> owners = svc.getMetadata().getOwnerReferences();
    String uid = vip.getMetadata().getUid();
    return owners != null && uid != null && owners.stream().anyMatch(o -> "VirtualIP".equals(o.getKind())
        && o.getApiVersion() != null && o.getApiVersion().startsWith(LegacyKinds.VIRTUAL_IP.getGroup() + "/")
        && uid.equals(o.getUid()));
  }

  /**
   * Deletes {@code seen} if a Service of its name still has its uid (a precondition of the DELETE). True when
   * it is gone; false when the name now belongs to another Service (409).
   */
  static boolean deleteIfSame(KubernetesClient client, Service seen) {
    String url = URLUtils.join(client.getMasterUrl().toString(), "api", "v1", "namespaces",
        seen.getMetadata().getNamespace(), "services", seen.getMetadata().getName());
    HttpResponse<String> answer = ConditionedDelete.send(client, url,
        new Preconditions(null, seen.getMetadata().getUid()), "Service " + seen.getMetadata().getName());
    int code = answer.code();
    if (code == 200 || code == 202 || code == 404) {
      return true;
    }
    if (code == 409) {
      return false;
    }
    throw new KubernetesClientException("deleting Service " + seen.getMetadata().getName() + " answered " + code
        + ": " + answer.body(), code, null);
  }
}
