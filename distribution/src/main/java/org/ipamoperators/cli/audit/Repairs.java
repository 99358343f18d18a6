package org.ipamoperators.cli.audit;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.ipamoperators.controller.common.ledger.IPBlock;
import org.ipamoperators.controller.common.ledger.IPBlockEntry;
import org.ipamoperators.controller.common.ledger.IPBlockSpec;
import org.ipamoperators.core.audit.Repair;

/**
 * Carries out the repairs the checker proposed: each is the delete of one claim, guarded by the
 * resourceVersion the audit read, so a claim that changed since (re-created, taken over) is left alone.
 * A claim that is an IPBlock entry is removed from its block by a write conditioned the same way (the
 * version the audit read, or the one this run's own previous repair of that block left).
 */
public final class Repairs {
  private final KubernetesClient client;

  public Repairs(KubernetesClient client) {
    this.client = client;
  }

  /** What was done, one line per claim, including the claims left alone and why. */
  public List<String> apply(ClusterFacts facts, List<Repair> repairs) {
    List<String> done = new ArrayList<>();
    Map<String, IPBlock> repairedBlocks = new HashMap<>();
    for (Repair r : repairs) {
      HasMetadata claim = facts.claimObject(r.entry());
      if (claim == null) {
        continue;
      }
      String address = facts.blockAddress(r.entry());
      if (claim instanceof IPBlock read && address != null) {
        IPBlock block = Serialization.clone(repairedBlocks.getOrDefault(read.getMetadata().getName(), read));
        if (!block.entries().containsKey(address)) {
          done.add(r.entry().reference() + " already gone");
          continue;
        }
        Map<String, IPBlockEntry> rest = new TreeMap<>(block.entries());
        rest.remove(address);
        block.setSpec(new IPBlockSpec(block.getSpec().cidr(), rest));
        try {
          repairedBlocks.put(block.getMetadata().getName(), client.resource(block).update()); // PUT with the RV read
          done.add(r.entry().reference() + " released: " + r.reason());
        } catch (KubernetesClientException e) {
          if (e.getCode() != 409 && e.getCode() != 404) {
            throw e;
          }
          done.add(r.entry().reference() + " left alone: its block changed since the audit read it");
        }
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
