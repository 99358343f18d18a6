package org.ipamoperators.keepalived.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * {@code KeepalivedGroup} (redhatcop.redhat.io/v1alpha1, namespaced): one keepalived cluster (a DaemonSet on the
 * selected nodes and its configuration) announcing the VIPs of the Services that point to it. Group, kind and the
 * old fields are redhat-cop keepalived-operator's, so its objects keep working; the VRRP timing, priorities,
 * shared instances, the namespace selector and the router-id space are new.
 */
@Group("redhatcop.redhat.io")
@Version("v1alpha1")
@Kind("KeepalivedGroup")
@Plural("keepalivedgroups")
@ShortNames("kg")
@AdditionalPrinterColumn(name = "Interface", jsonPath = ".spec.interface")
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status")
@AdditionalPrinterColumn(name = "Services", jsonPath = ".status.serviceCount", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Instances", jsonPath = ".status.instanceCount", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Nodes", jsonPath = ".status.nodeCount", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class KeepalivedGroup extends CustomResource<KeepalivedGroupSpec, KeepalivedGroupStatus> implements Namespaced {
  private static final long serialVersionUID = 1L;

  /** {@code namespace/name}, as Services name the group in their annotation. */
  public String key() {
    return getMetadata().getNamespace() + "/" + getMetadata().getName();
  }
}
