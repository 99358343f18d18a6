package org.ipamoperators.controller.common.ledger;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * One claimed address, cluster-scoped and named after the address, so that creating it is the lock:
 * the API server lets exactly one creator win, whatever the caches, replicas or restarts, as
 * Kubernetes itself does for Service IPs with IPAddress objects. Every controller of the suite
 * claims here, so an address held by one can never be handed out by another.
 */
@AdditionalPrinterColumn(name = "Address", jsonPath = ".spec.address")
@AdditionalPrinterColumn(name = "Pool", jsonPath = ".spec.pool")
@AdditionalPrinterColumn(name = "Owner-Kind", jsonPath = ".spec.owner.kind")
@AdditionalPrinterColumn(name = "Owner", jsonPath = ".spec.owner.name")
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
@Group("ipam.ipamoperators.org")
@Version("v1alpha1")
@Kind("IPClaim")
@Plural("ipclaims")
@ShortNames("ipc")
public class IPClaim extends CustomResource<IPClaimSpec, Void> {
  private static final long serialVersionUID = 1L;

  public static IPClaim of(String name, IPClaimSpec spec, java.util.Map<String, String> labels) {
    IPClaim c = new IPClaim();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    meta.setLabels(labels);
    c.setMetadata(meta);
    c.setSpec(spec);
    return c;
  }
}
