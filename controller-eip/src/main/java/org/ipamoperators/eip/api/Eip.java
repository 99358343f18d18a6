package org.ipamoperators.eip.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * {@code Eip} (materialize.cloud/v2, namespaced, stored): one AWS Elastic IP, held by a pod or by one of a set of
 * nodes. Group, kind, versions and fields are k8s-eip-operator's, so its objects keep working.
 */
@Group(EipNames.GROUP)
@Version(value = "v2", storage = true, served = true)
@Kind("Eip")
@Plural("eips")
@Singular("eip")
@AdditionalPrinterColumn(name = "AllocationID", jsonPath = ".status.allocationId")
@AdditionalPrinterColumn(name = "PublicIP", jsonPath = ".status.publicIpAddress")
@AdditionalPrinterColumn(name = "ResourceId", jsonPath = ".status.resourceId")
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status")
@AdditionalPrinterColumn(name = "ENI", jsonPath = ".status.eni", priority = 1)
@AdditionalPrinterColumn(name = "PrivateIP", jsonPath = ".status.privateIpAddress", priority = 1)
@AdditionalPrinterColumn(name = "AssociationId", jsonPath = ".status.associationId", priority = 1)
public class Eip extends CustomResource<EipSpec, EipStatus> implements Namespaced {
  private static final long serialVersionUID = 1L;

  public String key() {
    return getMetadata().getNamespace() + "/" + getMetadata().getName();
  }
}
