package org.ipamoperators.controller.common.ids;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;
import java.util.Map;

/**
 * One claimed number of an {@link IdSpace}, cluster-scoped and named {@code <space>.<id>}, so that creating it is
 * the lock, exactly as {@code IPClaim} is for addresses: one creator wins on the API server whatever the caches,
 * replicas or restarts. VRRP router ids live here, so two KeepalivedGroups on one network never share one.
 */
@AdditionalPrinterColumn(name = "Space", jsonPath = ".spec.space")
@AdditionalPrinterColumn(name = "ID", jsonPath = ".spec.id", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Purpose", jsonPath = ".spec.purpose")
@AdditionalPrinterColumn(name = "Owner-Kind", jsonPath = ".spec.owner.kind")
@AdditionalPrinterColumn(name = "Owner-Namespace", jsonPath = ".spec.owner.namespace")
@AdditionalPrinterColumn(name = "Owner", jsonPath = ".spec.owner.name")
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
@Group("ipam.ipamoperators.org")
@Version("v1alpha1")
@Kind("IDClaim")
@Plural("idclaims")
@ShortNames("idc")
public class IDClaim extends CustomResource<IDClaimSpec, Void> {
  private static final long serialVersionUID = 1L;

  public static IDClaim of(String name, IDClaimSpec spec, Map<String, String> labels) {
    IDClaim c = new IDClaim();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(name);
    meta.setLabels(labels);
    c.setMetadata(meta);
    c.setSpec(spec);
    return c;
  }
}
