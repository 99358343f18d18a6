package org.ipamoperators.cli.audit;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import org.ipamoperators.core.audit.Repair;

/**
 * Carries out the repairs the checker proposed: each is the delete of one claim, guarded by the
 * resourceVersion the audit read, so a claim that changed since (re-created, taken over) is left alone.
 */
public final class Repairs {
  private final KubernetesClient client;

  public Repairs(KubernetesClient client) {
    this.client = client;
  }

  /** What was done, one line per claim, including the claims left alone and why. */
  public List<String> apply(ClusterFacts facts, List<Repair> repairs) {
    List<String> done = new ArrayList<>();
    for (Repair r : repairs) {
      HasMetadata claim = facts.claimObject(r.entry());
      if (claim == null) {
        continue;
      }
      String rv = claim.getMetadata().getResourceVersion();
      try {
        var deleted = client.resource(claim).lockResourceVersion(rv).delete();
        done.add(r.entry().reference() + (deleted.isEmpty() ? " already gone" : " released: " + r.reason()));
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 && e.getCode() != 404) {
          throw e;
        }
        done.add(r.entry().reference() + " left alone: it changed since the audit read it");
      }
    }
    return done;
  }
}
