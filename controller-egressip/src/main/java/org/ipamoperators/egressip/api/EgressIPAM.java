package org.ipamoperators.egressip.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * {@code EgressIPAM} (redhatcop.redhat.io/v1alpha1, cluster-scoped): egress IPs for the namespaces
 * that opt in with the {@code egressip-ipam-operator.redhat-cop.io/egressipam} annotation. The
 * group, kind and field names are the old operator's.
 */
@Group("redhatcop.redhat.io")
@Version("v1alpha1")
@Kind("EgressIPAM")
@Plural("egressipams")
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status")
@AdditionalPrinterColumn(name = "Assigned", jsonPath = ".status.assignedNamespaces", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Pending", jsonPath = ".status.pendingNamespaces", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Rejected", jsonPath = ".status.rejectedNamespaces", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Network", jsonPath = ".status.networkType")
public class EgressIPAM extends CustomResource<EgressIPAMSpec, EgressIPAMStatus> {
  private static final long serialVersionUID = 1L;
}
